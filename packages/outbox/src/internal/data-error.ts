/**
 * SQLSTATE classes in which PostgreSQL refuses the data itself, not the request: 22 (data
 * exception: a NUL in text or jsonb, invalid UTF-8, a value out of range) and 54 (program limit
 * exceeded: an index row or a jsonb value too large). Sending the same data again fails the
 * same way, so the message is parked instead of retried. Everything else (a connection lost, a
 * server restarting, a lock timeout) is transient and retried in place.
 */
const DATA_ERROR_STATE = /^(22|54)[0-9A-Z]{3}$/;

interface PgError {
  readonly code: string;
  readonly message: string;
  readonly detail?: string | undefined;
}

/** The PostgreSQL data error in `error` or its `cause` chain, if there is one. */
export function dataErrorOf(error: unknown): PgError | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const { code, detail } = current as { code?: unknown; detail?: unknown };
    if (typeof code === 'string' && DATA_ERROR_STATE.test(code)) {
      return {
        code,
        message: current.message,
        detail: typeof detail === 'string' ? detail : undefined,
      };
    }
    current = current.cause;
  }
  return undefined;
}

/** The reason a message is parked with when PostgreSQL refused to store its data. */
export function refusedDataReason(error: PgError): string {
  const detail = error.detail === undefined ? '' : ` (${error.detail})`;
  return `PostgreSQL refused the data: ${error.code} ${error.message}${detail}`;
}
