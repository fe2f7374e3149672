import { z } from 'zod';
import { type AnyChannelKind, CHANNEL_KINDS, channelKind } from './registry.js';

/** Validating `channels.<name>` by type, for the config loader's checks and the notify module. */

export interface ChannelProblem {
  path: string;
  message: string;
}

export interface ConfiguredChannel {
  name: string;
  kind: AnyChannelKind;
  /** The entry as the kind's schema parsed it (defaults applied, secrets still env names). */
  config: unknown;
}

type Entries = Record<string, { type: string } & Record<string, unknown>>;

/** One problem per bad key, with the key path (`channels.phone.topic`) the loader prints. */
export function checkChannels(channels: Entries): ChannelProblem[] {
  const problems: ChannelProblem[] = [];
  for (const [name, entry] of Object.entries(channels)) {
    const kind = channelKind(entry.type);
    if (!kind) {
      problems.push({
        path: `channels.${name}.type`,
        message: `unknown channel type "${entry.type}"; use one of ${Object.keys(CHANNEL_KINDS).join(', ')}`,
      });
      continue;
    }
    const result = kind.configSchema.safeParse(entry);
    if (result.success) continue;
    for (const issue of result.error.issues) {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
      for (const key of keys) {
        const path = ['channels', name, ...issue.path.map(String), ...(key ? [key] : [])].join('.');
        problems.push({
          path,
          message: key ? 'unknown key; remove it (see docs/channels.md)' : issue.message,
        });
      }
    }
  }
  return problems;
}

/** Parses every entry; call after `checkChannels` found nothing (it throws on the first bad entry). */
export function parseChannels(channels: Entries): ConfiguredChannel[] {
  return Object.entries(channels).map(([name, entry]) => {
    const kind = channelKind(entry.type);
    if (!kind) throw new TypeError(`channels.${name}.type: unknown channel type`);
    return { name, kind, config: kind.configSchema.parse(entry) };
  });
}

const CHANNEL_NAME = /^[a-z0-9][a-z0-9_-]*$/;

/**
 * The `channels:` section as a schema: each entry validated by its kind's strict schema, with the
 * messages `checkChannels` gives (the kind's docs link). The delivery module owns the key.
 */
export const channelsConfigSchema = z
  .record(
    z.string().regex(CHANNEL_NAME, 'channel names are lower-case letters, digits, - and _'),
    z.looseObject({ type: z.string().min(1) }),
  )
  .superRefine((channels, ctx) => {
    for (const p of checkChannels(channels as Entries)) {
      ctx.addIssue({ code: 'custom', path: p.path.split('.').slice(1), message: p.message });
    }
  })
  .default({});
