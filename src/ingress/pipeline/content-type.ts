import { AppError } from '../../errors/index.js';

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/**
 * The media types each kind's verifier can read: GitHub's form mode (`payload=<json>`) and Slack's
 * slash commands and interactivity are forms; everything else is JSON only.
 */
const FORM_KINDS = new Set(['github', 'slack']);

export function acceptsContentType(sourceType: string, contentType: string | undefined): boolean {
  const type = contentType ?? '';
  if (JSON_TYPE.test(type)) return true;
  return FORM_KINDS.has(sourceType) && FORM_TYPE.test(type);
}

/** Throws 415 before a byte of the body is read. */
export function requireContentType(sourceType: string, contentType: string | undefined): void {
  if (acceptsContentType(sourceType, contentType)) return;
  const wanted = FORM_KINDS.has(sourceType)
    ? 'application/json or application/x-www-form-urlencoded'
    : 'application/json';
  throw new AppError(
    'unsupported_media_type',
    `send Content-Type: ${wanted} (got ${contentType ? JSON.stringify(contentType.slice(0, 80)) : 'none'})`,
  );
}
