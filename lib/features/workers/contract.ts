import { z } from "zod";
import { instant } from "../../console/common-contract";

/** The contract of GET /api/v1/workers and GET /api/v1/workers/{index}/metrics. */

/** One worker process's /metrics, scraped when the console was asked. Counters are totals since the process started. */
const workerStatus = z.object({
  url: z.string().meta({ description: "The /metrics URL from WORKER_METRICS_URLS" }),
  up: z.boolean().meta({ description: "The scrape answered 200 with the worker library's idem_* metrics" }),
  error: z
    .string()
    .optional()
    .meta({ description: "Why the worker is down: refused, timed out, an HTTP status, not a worker's /metrics" }),
  scrapedAt: instant,
  claims: z.number().nullable().meta({ description: "idem_claims_total over every job type and result; null when down" }),
  duplicateSuppressions: z.number().nullable(),
  redeliveries: z.number().nullable(),
  uncaughtViolations: z.number().nullable(),
  startedAt: instant.nullable().optional().meta({ description: "process_start_time_seconds of the latest start seen" }),
  uptimeSeconds: z.number().nullable().optional(),
  workerName: z.string().nullable().optional().meta({
    description:
      "The worker's name across restarts, from idem_worker_info on its /metrics (several joined by commas); the last one seen when it is down; null when it never gave one",
  }),
  restarts: z.number().int().nullable().optional().meta({
    description:
      "Restarts in the last hour, from the starts the worker recorded itself (worker_starts): its process starts in the hour but the first on record. Null when unknown: no workerName, or the database did not answer",
  }),
  proxyPath: z.string().optional().meta({ description: "This worker's /metrics through the console (platform tokens only)" }),
});
export type WorkerStatus = z.infer<typeof workerStatus>;

/** `hint` is set when WORKER_METRICS_URLS is unset (and `workers` is empty). */
export const workersResponse = z.object({
  workers: z.array(workerStatus),
  hint: z.string().optional(),
  withheld: z.string().optional().meta({
    description: "Set for a tenant token: the workers (their addresses and fleet-wide counters) are not shown, and why",
  }),
});
export type WorkersResponse = z.infer<typeof workersResponse>;

/** /api/v1/workers/{index}/metrics: the index into WORKER_METRICS_URLS. */
export const workerMetricsPath = z.object({ index: z.string().regex(/^\d{1,4}$/) });
