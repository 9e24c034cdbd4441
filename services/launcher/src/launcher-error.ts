export type LauncherErrorCode = 'UNKNOWN_SETTING' | 'UNKNOWN_COMPONENT' | 'MIGRATION_FAILED';

/** A system that cannot be launched as asked; the message says what to change. */
export class LauncherError extends Error {
  readonly code: LauncherErrorCode;

  constructor(code: LauncherErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'LauncherError';
    this.code = code;
  }
}
