import type { LiveWorkerView } from "@/lib/features/retention-and-gaps/contract";
import { formatDuration, formatUtc } from "@/lib/format";

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
        <div className="table-scroll">
          <table className="data-table">
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col" className="num">
                  Retry window
                </th>
                <th scope="col">Last heartbeat</th>
              </tr>
            </thead>
            <tbody>
              {workers.map((w) => (
                <tr key={w.workerId}>
                  <td>
                    <code>{w.workerId}</code>
                  </td>
                  <td className="num">{formatDuration(w.maxRetryWindowSeconds)}</td>
                  <td>{formatUtc(w.heartbeatAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
