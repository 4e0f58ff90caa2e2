/**
 * Onceboard's worker library: make a job handler safe to run twice, including concurrently.
 * Usable from any Node process; imports nothing from the console. See docs/worker-library.md.
 * This is the worker's API; what only the console and operators use is the admin entry point
 * (admin.ts, the package's `/admin`).
 */

export type { Claim } from "./claim";
export type { BatchClaimInput } from "./claim-batch";
export { classifyError, type ErrorClass } from "./classify";
export type { EffectsDb, TransactionHandle } from "./db";
export type { Delivery } from "./delivery";
export type { Duration } from "./duration";
export { type ClaimOutcome, createEffects, type Effects } from "./effects";
// Every error the library throws is an EffectsError: tell them apart by `code` (and act on
// `disposition`). EffectNotAppliedError is the one a step throws itself.
export { EffectNotAppliedError, EffectsError, type EffectsErrorCode, isEffectsError } from "./errors";
export type { JobContext, JobDelivery, JobResult, StepOptions, StepReport } from "./job";
export { providerKeyFor } from "./keys";
export { defaultLogger, type Logger } from "./logger";
// Retention and partition maintenance on a schedule, from any worker (or the console).
export { type MaintenanceSchedule, startMaintenance } from "./maintenance-schedule";
export { defaultRegistry } from "./metrics";
// The library's own schema (default onceboard) and its installer.
// migrate() refuses a schema a newer version of the library migrated (SchemaNewerThanLibraryError).
export { type MigrateOptions, migrate, SchemaNewerThanLibraryError } from "./migrate";
export type { OnceInput, StepPolicy } from "./once";
export type { OnceManyAnswer } from "./once-many";
export type { EffectsOptions } from "./options";
export { onceboardMetadata, PROVIDER_METADATA_KEY, PROVIDER_METADATA_TENANT, providerOutcome } from "./provider-metadata";
export { DEFAULT_SCHEMA } from "./schema";
export { serveMetrics } from "./serve-metrics";
export type { EffectResult } from "./step";
