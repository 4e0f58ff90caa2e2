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
  /** process_start_time_seconds of the latest start seen (ISO 8601), null when unknown. */
  startedAt?: string | null;
  /** Seconds since that start, at the scrape. */
  uptimeSeconds?: number | null;
  /** Restarts the console's scrapes saw in the last RESTART_WINDOW_SECONDS (a new start time each). */
  restarts?: number;
  /** This worker's /metrics through the console (works from any machine, unlike a 127.0.0.1 URL). */
  proxyPath?: string;
}

/** The window the Workers panel counts restarts over. */
export const RESTART_WINDOW_SECONDS = 3600;

/** GET /api/v1/workers. `hint` is set when WORKER_METRICS_URLS is unset (and `workers` is empty). */
export interface WorkersResponse {
  workers: WorkerStatus[];
  hint?: string;
}
