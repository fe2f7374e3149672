/**
 * The key a message's inline push config is kept under until its executor runs. Apart from
 * handler.ts so the executor can use it without loading the SDK's server side at start (sdk.ts).
 */
export function inlineKey(owner: string, messageId: string): string {
  return `${owner}\u0000${messageId}`;
}
