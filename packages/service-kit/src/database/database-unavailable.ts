// SQLSTATE classes that mean "the server is not there or is going away", not "your query is wrong".
const unavailableSqlStates = new Set(['57P01', '57P02', '57P03', '53300']);
const unavailableErrnos = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const unavailableMessages = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
  'database is not reachable',
];

/**
 * True when `error` (or its cause) says the database cannot be reached: the API answers 503
 * (retry later) instead of 500, and readiness reports it.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 5) return false;
  const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  if (code !== undefined) {
    if (code.startsWith('08') || unavailableSqlStates.has(code) || unavailableErrnos.has(code)) {
      return true;
    }
  }
  if (unavailableMessages.some((message) => error.message.includes(message))) return true;
  if (
    error instanceof AggregateError &&
    error.errors.some((e) => isDatabaseUnavailable(e, depth + 1))
  ) {
    return true;
  }
  return isDatabaseUnavailable(error.cause, depth + 1);
}
