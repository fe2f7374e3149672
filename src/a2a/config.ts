import { z } from 'zod';
import { commandActionSchema } from '../tasks/config.js';

/** 1 MB: a message is an instruction plus its context, not an upload; larger bodies get a clear error. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;

const skillSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/, 'skill ids are lower-case letters, digits, ., - and _'),
  name: z.string().min(1),
  description: z.string().min(1),
  tags: z.array(z.string().min(1)).default([]),
  examples: z.array(z.string().min(1)).default([]),
  /** What a skill runs: the same command action a trigger launches (docs/tasks.md). */
  action: commandActionSchema,
  /** As a trigger's: tasks of this skill per UTC day, and at once (over every caller); beyond it REJECTED. */
  budget: z
    .strictObject({
      per_day: z.number().int().min(1).optional(),
      concurrent: z.number().int().min(1).optional(),
    })
    .optional(),
});

export const a2aConfigSchema = z.strictObject({
  /** `capabilities.pushNotifications`; false answers every push-config call with -32003. */
  push: z.boolean().default(true),
  skills: z
    .array(skillSchema)
    .default([])
    .refine((s) => new Set(s.map((k) => k.id)).size === s.length, 'skill ids must be unique'),
  /** The largest JSON-RPC request accepted, in bytes. */
  max_message_bytes: z.number().int().min(1024).default(DEFAULT_MAX_MESSAGE_BYTES),
  /** The card's `name` and `description` (default: Switchboard's own). */
  name: z.string().min(1).default('Switchboard'),
  description: z
    .string()
    .min(1)
    .default('A self-hosted control plane that runs agent tasks with approvals and durable notifications'),
});

export type A2AConfig = z.infer<typeof a2aConfigSchema>;
export type A2ASkill = A2AConfig['skills'][number];
