import type { LiveWorkerView } from "@/lib/features/retention-and-gaps/contract";
import { formatDuration, formatUtc } from "@/lib/format";
import { type Column, DataTable } from "../ui/data-table";

const LIVE_WORKER_COLUMNS: Column<LiveWorkerView>[] = [
  { id: "worker", label: "Worker", kind: "key", priority: 1, cell: (w) => <code>{w.workerId}</code> },
  { id: "retry-window", label: "Retry window", kind: "number", cell: (w) => formatDuration(w.maxRetryWindowSeconds) },
  { id: "heartbeat", label: "Last heartbeat", kind: "time", cell: (w) => formatUtc(w.heartbeatAt) },
];

/** The retry windows live workers declared: partitions they could still need are kept. */
export function LiveWorkersSection({ workers }: { workers: LiveWorkerView[] }) {
  return (
    <section className="panel panel-flush" aria-labelledby="retention-workers">
      <div className="panel-header">
        <h2 id="retention-workers">Declared retry windows of live workers</h2>
      </div>
      {workers.length === 0 ? (
        <p className="panel-empty">No live worker has registered (createEffects with register or maintain).</p>
      ) : (
        <DataTable columns={LIVE_WORKER_COLUMNS} rows={workers} rowKey={(w) => w.workerId} labelledBy="retention-workers" />
      )}
    </section>
  );
}
