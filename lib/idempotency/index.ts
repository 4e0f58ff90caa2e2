/**
 * Onceboard's worker library: make a job handler safe to run twice, including concurrently.
 * Usable from any Node process; imports nothing from the console. See docs/worker-library.md.
 * This is the worker's API; what only the console and operators use is the admin entry point
 * (admin.ts, the package's `/admin`).
 */

export type { Claim } from "./claim";
export type { BatchClaimInput, BatchCompleteAnswer } from "./claim-batch";
export type { ClaimResultKind } from "./claim-sql";
export { classifyError, type ErrorClass } from "./classify";
export type { EffectsDb, PrismaClientLike, PrismaLike, TransactionHandle } from "./db";
export type { Delivery } from "./delivery";
export { type Duration, toMs } from "./duration";
export { type BatchClaimOutcome, type ClaimOutcome, createEffects, type Effects, type TxOf } from "./effects";
export {
  CitusSetupError,
  ClaimSettledError,
  type Disposition,
  EffectInFlightError,
  EffectKeyReuseError,
  EffectNotAppliedError,
  EffectsClosedError,
  EffectsDatabaseError,
  EffectsError,
  type EffectsErrorCode,
  InvalidEffectInputError,
  InvalidEffectKeyError,
  InvalidEffectsOptionsError,
  IsolationLevelError,
  isEffectsError,
  LeaseLostError,
  NotInTransactionError,
  OutcomeNotStorableError,
  OutcomeTooLargeError,
  PartitionMissingError,
  RetentionConfigError,
  RetentionWindowError,
} from "./errors";
export type { JobContext, JobDelivery, JobResult, StepOptions, StepReport, TransactionStepOptions } from "./job";
export { providerKeyFor } from "./keys";
export { defaultLogger, type LogFn, type Logger, type LogLevel } from "./logger";
// Retention and partition maintenance on a schedule, from any worker (or the console).
export { type MaintenanceSchedule, startMaintenance } from "./maintenance-schedule";
export { createRegistry, defaultRegistry } from "./metrics";
// The library's own schema (default onceboard) and its installer.
export {
  type LibraryMigrateResult,
  LibraryMigrationError,
  type MigrateOptions,
  migrate,
  SchemaNewerThanLibraryError,
} from "./migrate";
export type { OnceInput, StepPolicy } from "./once";
export type { OnceManyAnswer } from "./once-many";
export type { EffectsOptions } from "./options";
export {
  type OnceboardMetadata,
  onceboardMetadata,
  PROVIDER_METADATA_KEY,
  PROVIDER_METADATA_TENANT,
  type ProviderOutcome,
  providerOutcome,
} from "./provider-metadata";
export { DEFAULT_SCHEMA } from "./schema";
export { type MetricsServer, serveMetrics } from "./serve-metrics";
export type { EffectResult } from "./step";
export { LIBRARY_PACKAGE, LIBRARY_VERSION } from "./version";
