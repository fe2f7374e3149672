import { recipientKeysIn } from '../notify/recipients.js';

/** The tools whose schemas refuse recipients: a call naming one is also recorded and alerted. */
const GOVERNED_TOOLS = new Set(['report_progress', 'ask_approval']);

/** A `tools/call` of a governed tool whose arguments name recipients (`to`, `chat_id`, …), else undefined. */
export function refusedRecipientCall(
  message: unknown,
): { id?: unknown; params: Record<string, unknown> } | undefined {
  const m = message as { id?: unknown; method?: unknown; params?: Record<string, unknown> } | null;
  if (m?.method !== 'tools/call' || !m.params) return undefined;
  const name = m.params['name'];
  if (typeof name !== 'string' || !GOVERNED_TOOLS.has(name)) return undefined;
  return recipientKeysIn(m.params['arguments']).length > 0 ? { id: m.id, params: m.params } : undefined;
}
