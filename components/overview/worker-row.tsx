import type { WorkerStatus } from "@/lib/features/workers/contract";
import { formatElapsed } from "@/lib/format";
import { WorkerCountCell } from "./worker-count-cell";

/** One worker: its URL (a link through the console for platform tokens), up or down, uptime, restarts and counters. */
export function WorkerRow({ worker }: { worker: WorkerStatus }) {
  const state = worker.up ? "up" : "down";
  const restarts = worker.restarts ?? 0;
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
        data-tone={restarts > 0 ? "warning" : undefined}
        title="restarts seen in the last hour"
      >
        {restarts}
      </td>
      <WorkerCountCell value={worker.claims} />
      <WorkerCountCell value={worker.duplicateSuppressions} />
      <WorkerCountCell value={worker.redeliveries} />
      <WorkerCountCell value={worker.uncaughtViolations} tone="danger" />
    </tr>
  );
}
