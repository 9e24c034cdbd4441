export type OutboxErrorCode =
  'NOT_A_TRANSACTION' | 'INVALID_EVENT' | 'INVALID_OPTIONS' | 'SEND_TIMEOUT' | 'STOPPED';

/** The library's one error type: a stable `code` to branch on, the original error as `cause`. */
export class OutboxError extends Error {
  readonly code: OutboxErrorCode;

  constructor(code: OutboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboxError';
    this.code = code;
  }
}
