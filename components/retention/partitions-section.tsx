import type { PartitionView } from "@/lib/features/retention-and-gaps/contract";
import { formatBytes, formatCount, formatUtc } from "@/lib/format";

/** Every partition of effects, with its size and what keeps it (or what the plan does to it). */
export function PartitionsSection({ partitions }: { partitions: PartitionView[] }) {
  return (
    <section className="panel panel-flush" aria-labelledby="retention-partitions">
      <div className="panel-header">
        <h2 id="retention-partitions">Partitions</h2>
        <span className="panel-meta">{partitions.length}</span>
      </div>
      <div className="table-scroll">
        <table className="data-table" data-testid="partitions">
          <thead>
            <tr>
              <th scope="col">Partition</th>
              <th scope="col">Range</th>
              <th scope="col" className="num">
                Rows (est.)
              </th>
              <th scope="col" className="num">
                Size
              </th>
              <th scope="col" className="num">
                In progress
              </th>
              <th scope="col">Kept by</th>
            </tr>
          </thead>
          <tbody>
            {partitions.map((p) => (
              <tr key={p.name} data-partition={p.name}>
                <td>
                  <code>{p.name}</code>
                </td>
                <td>
                  {formatUtc(p.from, { seconds: false })} – {formatUtc(p.to, { seconds: false })}
                </td>
                <td className="num">{formatCount(p.estimatedRows)}</td>
                <td className="num">{formatBytes(p.bytes)}</td>
                <td className="num">{p.liveClaims ?? "–"}</td>
                <td title={p.reason}>{p.action === "keep" ? p.guard : <span className="badge">{p.action}</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
