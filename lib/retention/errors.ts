/** Why a retention change or run was refused; the API maps codes to statuses (lib/api/errors.ts). */
export type RetentionErrorCode = "RETENTION_REFUSED" | "RETENTION_INVALID";

export class RetentionError extends Error {
  readonly code: RetentionErrorCode;
  constructor(code: RetentionErrorCode, message: string) {
    super(message);
    this.name = "RetentionError";
    this.code = code;
  }
}
