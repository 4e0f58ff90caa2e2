/**
 * Onceboard's admin entry point: what the console, operators' scripts and benchmarks use, never a
 * worker. The worker's API is the main entry point (index.ts).
 */

// Setting up a Citus cluster (npm run db:migrate -- --citus), for operators' tools.
export { type DistributeResult, distributeForCitus, isEffectsDistributed } from "./citus";
export { codePointLength, MAX_KEY_LENGTH, requestHash, validateKey } from "./keys";
// Retention and partition maintenance: the settings and live workers it reads, its plan, one run.
export { type MaintainOptions, type MaintenanceRunResult, maintain, type Operation, type OperationKind } from "./maintenance";
export { type MaintenanceMetrics, maintenanceMetrics, partitionMissingCounter } from "./maintenance-metrics";
export {
  fmtSeconds,
  type Guard,
  type MaintenancePlan,
  NEWEST_KEPT,
  type PartitionState,
  type PlannedCreate,
  type PlannedIndex,
  partitionName,
  planMaintenance,
} from "./maintenance-plan";
export {
  DEFAULT_RETENTION_SETTINGS,
  type LiveWorker,
  PARTITION_INTERVALS,
  type PartitionInterval,
  partitionIntervalSeconds,
  type RetentionSettingsRow,
  readLiveWorkers,
  readRetentionSettings,
} from "./maintenance-settings";
export { createMetrics, type EffectsMetrics, GAP_BUCKET_BOUNDS } from "./metrics";
export { LIBRARY_MIGRATIONS_DIR, migrationsTableSql, readLibraryMigrations } from "./migrate";
export { MAX_LEASE_MS, MAX_WAIT_MS, MIN_LEASE_MS, MIN_RETENTION_MS } from "./options";
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
// Releasing a stuck claim, under the claim's lock and guards; the console authorises and audits it.
export { type ReleaseInput, type ReleaseRefusal, type ReleaseResult, releaseClaim, type UnreleasedEffect } from "./release";
export { isRetryable, RETRYABLE_SQLSTATES, withRetry } from "./retryable";
export { inSchema, schemaNameOf } from "./schema";
export { TIMELINE_ANSWERS, type TimelineAnswer } from "./timeline";
export { registerWorker, type WorkerRegistration, type WorkerRegistrationOptions } from "./worker-registry";
