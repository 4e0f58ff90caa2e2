import Link from "next/link";
import type { GapSeries } from "@/lib/features/retention-and-gaps/gaps-contract";
import { formatCount, formatDuration } from "@/lib/format";
import { type GapsParams, gapsHref } from "./gap-filters";

/** One job type's or tenant's gap percentiles, its name linking to the page filtered to it. */
export function GapStatsRow({ s, params, kind }: { s: GapSeries; params: GapsParams; kind: "job_type" | "tenant" }) {
  const st = s.stats;
  return (
    <tr>
      <th scope="row">
        <Link href={gapsHref(params, kind === "job_type" ? { jobType: s.name } : { tenant: s.name })} className="job-type">
          {s.name}
        </Link>
      </th>
      <td>{formatCount(st.samples)}</td>
      <td>{formatDuration(st.p50)}</td>
      <td>{formatDuration(st.p90)}</td>
      <td>{formatDuration(st.p99)}</td>
      <td>{formatDuration(st.p999)}</td>
      <td>
        {st.maxAtLeast === null
          ? "—"
          : st.maxExact
            ? formatDuration(st.maxAtLeast)
            : st.maxAtMost === null
              ? `> ${formatDuration(st.maxAtLeast)}`
              : `≤ ${formatDuration(st.maxAtMost)}`}
      </td>
      <td className={st.beyondRetention > 0 ? "text-danger" : undefined}>{formatCount(st.beyondRetention)}</td>
    </tr>
  );
}
