import type { GapSeries } from "@/lib/features/retention-and-gaps/gaps-contract";
import type { GapsParams } from "./gap-filters";
import { GapStatsRow } from "./gap-stats-row";

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
    <div className="table-scroll">
      <table className="data-table" data-testid={`gap-stats-${kind}`}>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{kind === "job_type" ? "Job type" : "Tenant"}</th>
            <th scope="col">Gaps</th>
            <th scope="col">p50</th>
            <th scope="col">p90</th>
            <th scope="col">p99</th>
            <th scope="col">p99.9</th>
            <th scope="col">max</th>
            <th scope="col">beyond retention</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <GapStatsRow key={s.name} s={s} params={params} kind={kind} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
