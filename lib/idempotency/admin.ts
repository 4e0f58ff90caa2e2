/**
 * Onceboard's admin entry point: what the console and operators' scripts use, never a worker. The
 * worker's API is the main entry point (index.ts); the library's words and rules (statuses, the
 * stuck rule, default settings) are the states entry point (states.ts).
 */

// Citus: distributing the library's schema (`npm run db:migrate -- --citus`), and whether it is.
export { distributeForCitus, isEffectsDistributed } from "./citus";
// A pool's connection checked out with an 'error' listener already on it: held across several
// queries, it must hear a connection cut between them (else an uncaught exception).
export { connectListening } from "./db";
// Retention and partition maintenance: one run, its plan, the settings and live workers it reads.
export { maintain } from "./maintenance";
export { type MaintenancePlan, planMaintenance } from "./maintenance-plan";
export { type LiveWorker, readLiveWorkers, readRetentionSettings } from "./maintenance-settings";
export { GAP_BUCKET_BOUNDS, WORKER_INFO_METRIC } from "./metrics";
// The library's migrations, for an applier that moves a database from before them.
export { LIBRARY_MIGRATIONS_DIR, migrationsTableSql, readLibraryMigrations } from "./migrate";
export { classifyDatabaseError } from "./pg-errors";
// Releasing a stuck claim, under the claim's lock and guards; the console authorises and audits it.
export {
  type ReleaseRefusal,
  type ReleaseResult,
  releaseClaim,
  type SettledRelease,
  settleRelease,
  type UnreleasedEffect,
} from "./release";
export { inSchema, schemaNameOf } from "./schema";
export { readStuckClaims } from "./stuck-claims";
// A worker's restarts, from the starts it recorded when it registered (worker_starts).
export { readWorkerRestarts } from "./worker-starts";
