/** Why a retention change or run was refused; the API maps codes to statuses (lib/api/errors.ts). */
export type RetentionErrorCode = "RETENTION_REFUSED" | "RETENTION_INVALID" | "RETENTION_STALE";

/**
 * What stands in the way of a refused change: the setting (as the API's body names it, or the
 * live worker's declared window) and the value it must reach first. The API answers them as the
 * error's issues, the CLI prints them, the Gaps page's Apply shows them beside the change.
 */
export interface RetentionBlocker {
  setting: "retentionDays" | "maxRetryWindowDays" | "workerMaxRetryWindow";
  message: string;
}

export class RetentionError extends Error {
  readonly code: RetentionErrorCode;
  readonly blockers: RetentionBlocker[];
  constructor(code: RetentionErrorCode, message: string, blockers: RetentionBlocker[] = []) {
    super(message);
    this.name = "RetentionError";
    this.code = code;
    this.blockers = blockers;
  }
}
