import { createRequire } from 'node:module';

type CountTokens = (text: string) => number;
let countTokens: CountTokens | undefined;

/**
 * Token counts for context processing: gpt-tokenizer's `o200k_base`, the encoding of GPT-4o (the
 * model in the seed's story) and of OpenAI's current models. Chosen over js-tiktoken because it is
 * pure JavaScript with the ranks in the package (no download at run time), loads one encoding by
 * import path, and counts without building the token array. Other vendors' tokenizers differ by
 * some percent; the ratio before/after, which is what the event records, moves far less.
 */
export function tokenCount(text: string): number {
  if (text.length === 0) return 0;
  // Loaded on the first count: the encoding's ranks cost ~65 MB of resident memory, which a gateway
  // whose agents never touch a tool should not carry.
  countTokens ??= (
    createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: CountTokens }
  ).countTokens;
  return countTokens(text);
}
