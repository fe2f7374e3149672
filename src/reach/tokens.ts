import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Token counts for context processing: gpt-tokenizer's `o200k_base`, the encoding of GPT-4o (the
 * model in the seed's story) and of OpenAI's current models. Chosen over js-tiktoken because it is
 * pure JavaScript with the ranks in the package (no download at run time), loads one encoding by
 * import path, and counts without building the token array. Other vendors' tokenizers differ by
 * some percent; the ratio before/after, which is what the event records, moves far less.
 */
export function tokenCount(text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
}
