import { AppError } from '../errors/index.js';

const PG_CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);

/**
 * Maps driver errors that mean "the store itself is in trouble" onto catalogue errors, so the HTTP
 * layer answers 503/507 with a stable code instead of a 500 with a driver message. Anything else
 * (a constraint, a bug) passes through unchanged.
 */
export function classifyStoreError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = err as { code?: string; message?: string } | undefined;
  const code = e?.code ?? '';
  if (
    code === 'SQLITE_FULL' ||
    code === '53100' ||
    /no space left|disk is full|database or disk is full/i.test(e?.message ?? '')
  ) {
    return new AppError('store_full', undefined, undefined, { cause: err });
  }
  if (
    PG_CONNECTION_CODES.has(code) ||
    code === 'SQLITE_CANTOPEN' ||
    code === 'SQLITE_IOERR' ||
    code.startsWith('SQLITE_IOERR') ||
    code === 'SQLITE_BUSY' ||
    /Connection terminated|connection is closed|Client has encountered a connection error|The database connection is not open/i.test(
      e?.message ?? '',
    )
  ) {
    return new AppError('store_unavailable', undefined, undefined, { cause: err });
  }
  return err;
}
