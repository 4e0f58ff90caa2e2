import { DomainError, type DomainErrorCode } from "../../console/errors";

/** Why a retention change or run was refused; the route layer maps codes to statuses (lib/api/errors.ts). */
type RetentionErrorCode = Extract<DomainErrorCode, `RETENTION_${string}`>;

/**
 * What stands in the way of a refused change: the setting (as the API's body names it, or the
 * live worker's declared window) and the value it must reach first. The API answers them as the
 * error's issues, the CLI prints them, the Gaps page's Apply shows them beside the change.
 */
export interface RetentionBlocker {
  setting: "retentionDays" | "maxRetryWindowDays" | "workerMaxRetryWindow";
  message: string;
}

/** A refusal's blockers are its issues: the setting in the way, and the value it must reach. */
export class RetentionError extends DomainError {
  declare readonly code: RetentionErrorCode;
  readonly blockers: RetentionBlocker[];
  constructor(code: RetentionErrorCode, message: string, blockers: RetentionBlocker[] = []) {
    super(code, message, blockers.length > 0 ? blockers.map((b) => ({ path: b.setting, message: b.message })) : undefined);
    this.name = "RetentionError";
    this.blockers = blockers;
  }
}
