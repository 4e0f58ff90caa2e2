import Link from "next/link";
import type { GapSeries } from "@/lib/features/retention-and-gaps/gaps-contract";
import { formatCount, formatDuration } from "@/lib/format";
import { type Column, DataTable } from "../ui/data-table";
import { type GapsParams, gapsHref } from "./gap-filters";

/** The longest gap: exact, or the bucket it fell in when the histogram is all that is known. */
function maxGap(st: GapSeries["stats"]): string {
  if (st.maxAtLeast === null) return "—";
  if (st.maxExact) return formatDuration(st.maxAtLeast);
  return st.maxAtMost === null ? `> ${formatDuration(st.maxAtLeast)}` : `≤ ${formatDuration(st.maxAtMost)}`;
}

/** A job type's or tenant's gap percentiles, its name linking to the page filtered to it. */
function gapColumns(params: GapsParams, kind: "job_type" | "tenant"): Column<GapSeries>[] {
  return [
    {
      id: "name",
      label: kind === "job_type" ? "Job type" : "Tenant",
      kind: "id",
      priority: 1,
      cell: (s) => (
        <Link href={gapsHref(params, kind === "job_type" ? { jobType: s.name } : { tenant: s.name })} className="job-type">
          {s.name}
        </Link>
      ),
    },
    { id: "gaps", label: "Gaps", kind: "number", cell: (s) => formatCount(s.stats.samples) },
    { id: "p50", label: "p50", kind: "number", cell: (s) => formatDuration(s.stats.p50) },
    { id: "p90", label: "p90", kind: "number", cell: (s) => formatDuration(s.stats.p90) },
    { id: "p99", label: "p99", kind: "number", cell: (s) => formatDuration(s.stats.p99) },
    { id: "p999", label: "p99.9", kind: "number", cell: (s) => formatDuration(s.stats.p999) },
    { id: "max", label: "max", kind: "number", cell: (s) => maxGap(s.stats) },
    {
      id: "beyond-retention",
      label: "beyond retention",
      kind: "number",
      cell: (s) => formatCount(s.stats.beyondRetention),
      cellProps: (s) => ({ className: s.stats.beyondRetention > 0 ? "text-danger" : undefined }),
    },
  ];
}

/** The gap percentiles per job type or per tenant. */
export function GapStatsTable({
  caption,
  rows,
  params,
  kind,
}: {
  caption: string;
  rows: GapSeries[];
  params: GapsParams;
  kind: "job_type" | "tenant";
}) {
  return (
    <DataTable
      columns={gapColumns(params, kind)}
      rows={rows}
      rowKey={(s) => s.name}
      caption={caption}
      testId={`gap-stats-${kind}`}
    />
  );
}
