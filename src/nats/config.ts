import { z } from 'zod';

/** One subject token: what NATS allows between dots, without wildcards or spaces. */
const TOKEN = '[A-Za-z0-9_-]+';

/**
 * `nats:` — publish every committed event to NATS JetStream as a CloudEvent. Absent: off (nothing of
 * the NATS client is loaded). docs/scale.md#nats-jetstream.
 */
export const natsConfigSchema = z
  .strictObject({
    /** `nats://host:4222`; several servers comma-separated. User and password may sit in the URL. */
    url: z
      .string()
      .regex(
        /^(nats|tls):\/\/[^\s,]+(,\s*(nats|tls):\/\/[^\s,]+)*$/,
        'a NATS server URL (nats://host:4222 or tls://host:4222), several comma-separated',
      ),
    /** The JetStream stream the events land in; created (limits retention) when missing. */
    stream: z.string().regex(new RegExp(`^${TOKEN}$`), 'a stream name: letters, digits, - and _'),
    /** Events go to `<subject_prefix>.<type>` (`switchboard.hook.received`). */
    subject_prefix: z
      .string()
      .regex(
        new RegExp(`^${TOKEN}(\\.${TOKEN})*$`),
        'subject tokens (letters, digits, - and _) separated by dots, no wildcards',
      ),
    /**
     * The variable holding the credentials: a `.creds` file's content (a user JWT and its nkey seed),
     * or else a token.
     */
    credentials_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (the secret itself stays in the env)')
      .optional(),
  })
  .optional();

export type NatsConfig = NonNullable<z.output<typeof natsConfigSchema>>;
