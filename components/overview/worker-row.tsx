import type { WorkerStatus } from "@/lib/features/workers/contract";
import { formatCount, formatElapsed } from "@/lib/format";
import { WorkerCountCell } from "./worker-count-cell";

/** One worker: its URL (a link through the console for platform tokens), up or down, uptime, restarts and counters. */
export function WorkerRow({ worker }: { worker: WorkerStatus }) {
  const state = worker.up ? "up" : "down";
  const restarts = worker.restarts ?? null;
  return (
    <tr data-testid="worker" data-state={state} data-url={worker.url}>
      <th scope="row">
        {/* Through the console: the worker's own URL (often 127.0.0.1) means nothing to a browser elsewhere.
            No proxyPath (a tenant token): a worker's full /metrics is platform data, so no link. */}
        {worker.proxyPath ? (
          <a className="worker-url" href={worker.proxyPath} target="_blank" rel="noreferrer">
            <code>{worker.url}</code>
          </a>
        ) : (
          <code className="worker-url" title="A worker's full metrics are shown to platform tokens only">
            {worker.url}
          </code>
        )}
      </th>
      <td className="worker-status">
        <span className="worker-state" data-state={state}>
          <span className="worker-state-dot" aria-hidden="true" />
          {worker.up ? "Up" : "Down"}
        </span>
        {worker.error ? <span className="worker-error">{worker.error}</span> : null}
      </td>
      <td className="num" data-testid="worker-uptime" title={worker.startedAt ? `started ${worker.startedAt}` : undefined}>
        {worker.uptimeSeconds != null ? formatElapsed(worker.uptimeSeconds) : "–"}
      </td>
      <td
        className="num"
        data-testid="worker-restarts"
        data-tone={restarts !== null && restarts > 0 ? "warning" : undefined}
        title={restartsTitle(worker)}
      >
        {restarts === null ? "–" : formatCount(restarts)}
      </td>
      <WorkerCountCell value={worker.claims} />
      <WorkerCountCell value={worker.duplicateSuppressions} />
      <WorkerCountCell value={worker.redeliveries} />
      <WorkerCountCell value={worker.uncaughtViolations} tone="danger" />
    </tr>
  );
}

/** Where the restart count comes from, or why there is none. */
function restartsTitle(worker: WorkerStatus): string {
  if (!worker.workerName)
    return "unknown: this worker's /metrics names no worker (idem_worker_info); workers of this library version do";
  if (worker.restarts == null) return `unknown: the starts recorded by ${worker.workerName} could not be read`;
  return `process starts ${worker.workerName} recorded in the last hour, after its first`;
}
