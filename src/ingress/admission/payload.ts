import type { Envelope } from '../../envelope/index.js';
import { readJsonText } from '../../envelope/json.js';
import type { Vault } from '../../log/vault.js';
import type { Db } from '../../store/port.js';
import type { AcceptedFacts } from '../pipeline/facts.js';

export type Loaded =
  | { ok: true; payload: unknown; text: string }
  | { ok: false; reason: 'payload_expired' | 'payload_unreadable' };

/**
 * The verified payload back from the vault. The raw bytes are what the sender signed; they are decoded
 * the way the verifiers decode them (JSON; a form, with the JSON in its `payload` field for GitHub's form
 * mode and Slack interactivity). Feishu's encrypted bodies come from the decoded copy the route kept.
 */
export async function loadPayload(
  vault: Vault,
  event: Envelope,
  facts: AcceptedFacts,
  db: Db,
): Promise<Loaded> {
  const ref = facts.parsed_ref ?? event.payload_ref;
  if (!ref) return { ok: false, reason: 'payload_expired' };
  const bytes = await vault.get(ref, db);
  if (!bytes) return { ok: false, reason: 'payload_expired' };
  const text = bytes.toString('utf8');
  const payload = decode(text);
  return payload === undefined ? { ok: false, reason: 'payload_unreadable' } : { ok: true, payload, text };
}

export function decode(text: string): unknown {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return json(text);
  const form = Object.fromEntries(new URLSearchParams(text));
  return typeof form.payload === 'string' ? json(form.payload) : form;
}

/** Read back from the vault, where a signed body is kept verbatim: repaired as at the door (common/request.ts). */
function json(text: string): unknown {
  const read = readJsonText(text, { repair: true });
  return read.ok ? read.value : undefined;
}
