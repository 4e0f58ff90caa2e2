import type { Column } from "@/components/ui/data-table";
import type { WorkerStatus } from "@/lib/features/workers/contract";
import { formatCount, formatElapsed } from "@/lib/format";

/** A worker's counter: "–" when the worker did not answer, faint at zero, tinted when `tone` and not zero. */
function counter(id: string, label: string, headingTitle: string, value: (w: WorkerStatus) => number | null, tone?: "danger") {
  return {
    id,
    label,
    headingTitle,
    kind: "number",
    cell: (w) => {
      const n = value(w);
      return n === null ? "–" : formatCount(n);
    },
    cellProps: (w) => {
      const n = value(w);
      if (n === null) return { "data-zero": "", title: "No data: the worker did not answer" };
      return { "data-zero": n === 0 ? "" : undefined, "data-tone": n > 0 ? tone : undefined };
    },
  } satisfies Column<WorkerStatus>;
}

/**
 * One worker a row: its URL (a link through the console for platform tokens), up or down (and
 * why), uptime, restarts and its counters since it started.
 */
export const WORKER_COLUMNS: Column<WorkerStatus>[] = [
  {
    id: "url",
    label: "Metrics URL",
    kind: "key",
    priority: 1,
    cell: (worker) =>
      // Through the console: the worker's own URL (often 127.0.0.1) means nothing to a browser elsewhere.
      // No proxyPath (a tenant token): a worker's full /metrics is platform data, so no link.
      worker.proxyPath ? (
        <a className="worker-url" href={worker.proxyPath} target="_blank" rel="noreferrer">
          <code>{worker.url}</code>
        </a>
      ) : (
        <code className="worker-url" title="A worker's full metrics are shown to platform tokens only">
          {worker.url}
        </code>
      ),
  },
  {
    id: "status",
    label: "Status",
    kind: "text",
    cell: (worker) => (
      <>
        <span className="worker-state" data-state={worker.up ? "up" : "down"}>
          <span className="worker-state-dot" aria-hidden="true" />
          {worker.up ? "Up" : "Down"}
        </span>
        {worker.error ? <span className="worker-error">{worker.error}</span> : null}
      </>
    ),
  },
  {
    id: "uptime",
    label: "Uptime",
    headingTitle: "since process_start_time_seconds",
    kind: "number",
    cell: (worker) => (worker.uptimeSeconds != null ? formatElapsed(worker.uptimeSeconds) : "–"),
    cellProps: (worker) => ({
      "data-testid": "worker-uptime",
      title: worker.startedAt ? `started ${worker.startedAt}` : undefined,
    }),
  },
  {
    id: "restarts",
    label: "Restarts (1 h)",
    headingTitle: "process starts each worker recorded in the last hour, after its first (worker_starts)",
    kind: "number",
    cell: (worker) => (worker.restarts == null ? "–" : formatCount(worker.restarts)),
    cellProps: (worker) => ({
      "data-testid": "worker-restarts",
      "data-tone": worker.restarts != null && worker.restarts > 0 ? "warning" : undefined,
      title: restartsTitle(worker),
    }),
  },
  counter("claims", "Claims", "idem_claims_total: claims, every result", (w) => w.claims),
  counter("suppressed", "Suppressed", "idem_duplicate_suppressions_total", (w) => w.duplicateSuppressions),
  counter("redelivered", "Redelivered", 'idem_deliveries_total{redelivered="true"}', (w) => w.redeliveries),
  counter("uncaught", "Uncaught", "idem_unique_violations_uncaught_total", (w) => w.uncaughtViolations, "danger"),
];

/** Where the restart count comes from, or why there is none. */
function restartsTitle(worker: WorkerStatus): string {
  if (!worker.workerName)
    return "unknown: this worker's /metrics names no worker (idem_worker_info); workers of this library version do";
  if (worker.restarts == null) return `unknown: the starts recorded by ${worker.workerName} could not be read`;
  return `process starts ${worker.workerName} recorded in the last hour, after its first`;
}
