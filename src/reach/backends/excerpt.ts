import { maskSecrets } from '../../scan/secrets.js';
import { PII_KINDS } from '../config.js';
import { redactText } from '../redact.js';
import { EXCERPT_CHARS } from './types.js';
import { prefix } from '../../text/index.js';

/**
 * A short, secret-free piece of a backend's failure output (an error body, stderr) for TOOL_FAILED:
 * enough to act on, never a credential or a person's number — secrets masked, every PII kind
 * redacted, whatever the tool's own `redact` list says.
 */
export function excerpt(text: string, max = EXCERPT_CHARS): string {
  // Masked before it is cut: a secret cut in half would no longer match its pattern.
  const flat = prefix(text, max * 8)
    .replace(/\s+/g, ' ')
    .trim();
  const clean = redactText(maskSecrets(flat), PII_KINDS);
  return clean.length > max ? `${prefix(clean, max)}…` : clean;
}
