import { pino, type Logger } from 'pino';

/**
 * Structured JSON logs. Anything that looks like a credential is censored by path, whatever module
 * logs it; code must still never put a secret into a message string.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-hub-signature-256"]',
  'headers["webhook-signature"]',
  'headers["x-slack-signature"]',
  'headers["x-telegram-bot-api-secret-token"]',
  'headers["x-gitlab-token"]',
  '*.password',
  '*.secret',
  '*.token',
  '*.key',
  '*.api_key',
  '*.authorization',
  'password',
  'secret',
  'token',
  'key',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { svc: 'switchboard' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination as pino.DestinationStream | undefined,
  );
}
