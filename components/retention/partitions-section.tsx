import type { PartitionView } from "@/lib/features/retention-and-gaps/contract";
import { formatBytes, formatCount, formatUtc } from "@/lib/format";
import { type Column, DataTable } from "../ui/data-table";

const PARTITION_COLUMNS: Column<PartitionView>[] = [
  { id: "name", label: "Partition", kind: "id", priority: 1, cell: (p) => <code>{p.name}</code> },
  {
    id: "range",
    label: "Range",
    kind: "text",
    cell: (p) => (
      <>
        <span className="nowrap">{formatUtc(p.from, { seconds: false })}</span> –{" "}
        <span className="nowrap">{formatUtc(p.to, { seconds: false })}</span>
      </>
    ),
  },
  { id: "rows", label: "Rows (est.)", kind: "number", cell: (p) => formatCount(p.estimatedRows) },
  { id: "size", label: "Size", kind: "number", cell: (p) => formatBytes(p.bytes) },
  {
    id: "in-progress",
    label: "In progress",
    kind: "number",
    cell: (p) => (p.liveClaims === null ? "–" : formatCount(p.liveClaims)),
  },
  {
    id: "kept-by",
    label: "Kept by",
    kind: "text",
    cell: (p) => (p.action === "keep" ? p.guard : <span className="badge">{p.action}</span>),
    cellProps: (p) => ({ title: p.reason }),
  },
];

/** Every partition of effects, with its size and what keeps it (or what the plan does to it). */
export function PartitionsSection({ partitions }: { partitions: PartitionView[] }) {
  return (
    <section className="panel panel-flush" aria-labelledby="retention-partitions">
      <div className="panel-header">
        <h2 id="retention-partitions">Partitions</h2>
        <span className="panel-meta">{partitions.length}</span>
      </div>
      <DataTable
        columns={PARTITION_COLUMNS}
        rows={partitions}
        rowKey={(p) => p.name}
        rowProps={(p) => ({ "data-partition": p.name })}
        labelledBy="retention-partitions"
        testId="partitions"
      />
    </section>
  );
}
