/**
 * The Workers panel's JSON shape, shared by the read model, the route handler and the React
 * components (types and constants only: safe to import from client code).
 */

/** One worker process's /metrics, scraped when the console was asked. Counters are totals since the process started. */
export interface WorkerStatus {
  /** The /metrics URL from WORKER_METRICS_URLS. */
  url: string;
  /** The scrape answered 200 with the worker library's idem_* metrics. */
  up: boolean;
  /** Why the worker is down: refused, timed out, an HTTP status, not a worker's /metrics. */
  error?: string;
  /** When the scrape finished (ISO 8601). */
  scrapedAt: string;
  /** idem_claims_total over every job type and result. Null when down. */
  claims: number | null;
  /** idem_duplicate_suppressions_total: duplicates answered with the stored outcome. */
  duplicateSuppressions: number | null;
  /** idem_deliveries_total{redelivered="true"}: deliveries the broker flagged as redelivered. */
  redeliveries: number | null;
  /** idem_unique_violations_uncaught_total: unique violations a handler raised itself (a guard bug). */
  uncaughtViolations: number | null;
}

/** GET /api/v1/workers. `hint` is set when WORKER_METRICS_URLS is unset (and `workers` is empty). */
export interface WorkersResponse {
  workers: WorkerStatus[];
  hint?: string;
}
