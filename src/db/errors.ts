// Connection-level failures: the database is unreachable or restarting, which is worth a retry (and a
// 503 to a client), unlike an error in what was asked of it.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
// 08: connection exceptions; 57P01-03: shutting down; 53300: too many connections; 57014: statement timeout.
const UNAVAILABLE_SQLSTATE = /^(08|57P0[1-3]|53300|57014)/;
const UNAVAILABLE_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|connection timeout|Client was closed|Query read timeout/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || UNAVAILABLE_SQLSTATE.test(e.code))) return true;
  return typeof e?.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message);
}
