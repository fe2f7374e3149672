import { z } from 'zod';

/** A model's price, in the table's currency per million tokens (the unit providers publish). */
const priceSchema = z.strictObject({
  input_per_mtok: z.number().nonnegative(),
  output_per_mtok: z.number().nonnegative(),
  /** Tokens read from the prompt cache; default the input price (an over-estimate, never an under-estimate). */
  cache_read_per_mtok: z.number().nonnegative().optional(),
  /** Tokens written to the prompt cache; default the input price. */
  cache_write_per_mtok: z.number().nonnegative().optional(),
});
export type Price = z.output<typeof priceSchema>;

/** A day's allowance (UTC day); either limit may be left out. */
const budgetSchema = z
  .strictObject({
    tokens_per_day: z.number().int().positive().optional(),
    /** In the price table's currency. */
    cost_per_day: z.number().positive().optional(),
  })
  .refine((b) => b.tokens_per_day !== undefined || b.cost_per_day !== undefined, {
    message: 'name tokens_per_day, cost_per_day or both',
  });
export type Budget = z.output<typeof budgetSchema>;

export const costsConfigSchema = z.strictObject({
  /** What `cost` is counted in; a label only (no conversion). */
  currency: z.string().min(1).max(12).default('USD'),
  /**
   * By model name as the runtime reports it; a key also prices every model it is a prefix of
   * (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`), the longest key winning.
   */
  prices: z.record(z.string().min(1), priceSchema).default({}),
  budgets: z
    .strictObject({
      /** The whole tenant's day. */
      tenant: budgetSchema.optional(),
      /** Every agent (key name) without an entry of its own under `agents`. */
      default_agent: budgetSchema.optional(),
      agents: z.record(z.string().min(1), budgetSchema).default({}),
    })
    .prefault({}),
  transcripts: z
    .strictObject({
      /**
       * Read the runtime's transcript at the end of a turn for its token usage. Only a file on this
       * machine can be read: a gateway on another host gets turns, tool calls and wall time only.
       */
      read: z.boolean().default(true),
      /**
       * Transcripts are read only under these folders (`~` is the home folder), so a hook body cannot
       * make the gateway open any other file. Default: where Claude Code and Codex keep them.
       */
      roots: z.array(z.string().min(1)).default(['~/.claude/projects', '~/.codex/sessions']),
      /** At most this much new transcript is read per turn; the rest waits for the next turn. */
      max_read_bytes: z
        .number()
        .int()
        .positive()
        .default(32 * 1024 * 1024),
    })
    .prefault({}),
});
export type CostsConfig = z.output<typeof costsConfigSchema>;
