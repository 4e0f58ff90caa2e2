/**
 * Onceboard's worker library: make a job handler safe to run twice, including concurrently.
 * Usable from any Node process; imports nothing from the console. See docs/worker-library.md.
 */

export type { Claim } from "./claim";
export type { BatchClaimInput, BatchCompleteAnswer } from "./claim-batch";
export type { ClaimResultKind } from "./claim-sql";
export { classifyError, type ErrorClass } from "./classify";
export type { EffectsDb, PrismaClientLike, PrismaLike, TransactionHandle } from "./db";
export type { Delivery } from "./delivery";
export type { Duration } from "./duration";
export { toMs } from "./duration";
export type { BatchClaimOutcome, ClaimOutcome, Effects, TxOf } from "./effects";
export { createEffects } from "./effects";
export {
  ClaimSettledError,
  type Disposition,
  EffectInFlightError,
  EffectKeyReuseError,
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
export { codePointLength, MAX_KEY_LENGTH, providerKeyFor, requestHash, validateKey } from "./keys";
export { defaultLogger, type LogFn, type Logger, type LogLevel } from "./logger";
// Retention and partition maintenance (issue 11): the manager runs from any worker or the console.
export {
  DEFAULT_RETENTION_SETTINGS,
  fmtSeconds,
  type Guard,
  type LiveWorker,
  type MaintainOptions,
  type MaintenancePlan,
  type MaintenanceRunResult,
  type MaintenanceSchedule,
  maintain,
  NEWEST_KEPT,
  type Operation,
  type OperationKind,
  PARTITION_INTERVALS,
  type PartitionInterval,
  type PartitionState,
  type PlannedCreate,
  type PlannedIndex,
  partitionName,
  planMaintenance,
  type RetentionSettingsRow,
  readLiveWorkers,
  readRetentionSettings,
  startMaintenance,
} from "./maintenance";
export { type MaintenanceMetrics, maintenanceMetrics, partitionMissingCounter } from "./maintenance-metrics";
export { createMetrics, createRegistry, defaultRegistry, type EffectsMetrics, GAP_BUCKET_BOUNDS } from "./metrics";
// The library's own schema (default onceboard) and its installer.
export {
  LIBRARY_MIGRATIONS_DIR,
  type LibraryMigrateResult,
  LibraryMigrationError,
  type MigrateOptions,
  migrate,
  migrationsTableSql,
  readLibraryMigrations,
} from "./migrate";
export type { OnceInput, StepPolicy } from "./once";
export type { OnceManyAnswer } from "./once-many";
export { type EffectsOptions, MAX_LEASE_MS, MAX_WAIT_MS, MIN_LEASE_MS, MIN_RETENTION_MS } from "./options";
export {
  CONNECTION_ERROR_CODES,
  classifyDatabaseError,
  type DatabaseErrorClass,
  type DatabaseErrorClassEntry,
  type DatabaseErrorKind,
  isConnectionError,
  isTransientDatabaseError,
  PG_ERROR_CLASSES,
  sqlStateOf,
} from "./pg-errors";
export { isRetryable, RETRYABLE_SQLSTATES, withRetry } from "./retryable";
export { DEFAULT_SCHEMA, inSchema, schemaNameOf } from "./schema";
export { type MetricsServer, serveMetrics } from "./serve-metrics";
export type { EffectResult } from "./step";
export { registerWorker, type WorkerRegistration, type WorkerRegistrationOptions } from "./worker-registry";
