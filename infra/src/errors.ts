/** Codes callers can branch on; the CLI prints message, hint and log file on one screen. */
export type InfraErrorCode =
  | 'JAVA_MISSING'
  | 'MAVEN_MISSING'
  | 'MAVEN_FAILED'
  | 'LOCK_TIMEOUT'
  | 'POSTGRES_MISSING'
  | 'PGBOUNCER_MISSING'
  | 'DOCKER_MISSING'
  | 'CONFIG_MISSING'
  | 'PORT_TAKEN'
  | 'NOT_READY'
  | 'START_FAILED'
  | 'UNKNOWN_COMPONENT'
  | 'NO_STACK'
  | 'INVALID_NAME'
  | 'INVALID_OPTION'
  | 'UNSUPPORTED';

export class InfraError extends Error {
  readonly code: InfraErrorCode;
  /** What the person should do about it. */
  readonly hint: string | undefined;
  /** Where the component wrote its output, for the details. */
  readonly logFile: string | undefined;

  constructor(
    code: InfraErrorCode,
    message: string,
    details: { hint?: string; logFile?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.name = 'InfraError';
    this.code = code;
    this.hint = details.hint;
    this.logFile = details.logFile;
  }
}
