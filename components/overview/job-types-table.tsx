import type { JobTypeOverview } from "@/lib/console/overview-types";
import { formatCount, formatPercent } from "./format";

function Num({ value, tone }: { value: number; tone?: "danger" | "warning" }) {
  return (
    <td className="num" data-zero={value === 0 ? "" : undefined} data-tone={value > 0 ? tone : undefined}>
      {formatCount(value)}
    </td>
  );
}

/** Every job type seen in the window: effects by status (effects table), claims and suppressions (rollups). */
export function JobTypesTable({ jobTypes }: { jobTypes: JobTypeOverview[] }) {
  return (
    <section className="panel panel-flush" aria-labelledby="job-types-heading">
      <div className="panel-header">
        <h2 id="job-types-heading">Job types</h2>
        <span className="panel-meta">{jobTypes.length === 1 ? "1 job type" : `${jobTypes.length} job types`}</span>
      </div>
      <div className="table-scroll">
        <table className="data-table" aria-labelledby="job-types-heading">
          <thead>
            <tr>
              <th scope="col">Job type</th>
              <th scope="col" className="num">
                Effects
              </th>
              <th scope="col" className="num">
                Completed
              </th>
              <th scope="col" className="num">
                In progress
              </th>
              <th scope="col" className="num">
                Failed
              </th>
              <th scope="col" className="num">
                Abandoned
              </th>
              <th scope="col" className="num">
                Claims
              </th>
              <th scope="col" className="num">
                Suppressed
              </th>
              <th scope="col" className="num">
                Dup. rate
              </th>
              <th scope="col" className="num">
                Uncaught
              </th>
            </tr>
          </thead>
          <tbody>
            {jobTypes.map((j) => {
              const deliveries = j.claims + j.duplicateSuppressions;
              return (
                <tr key={j.jobType} data-testid={`job-type-${j.jobType}`}>
                  <th scope="row">
                    <code className="job-type">{j.jobType}</code>
                  </th>
                  <Num value={j.effects.total} />
                  <Num value={j.effects.completed} />
                  <td className="num" data-zero={j.effects.in_progress === 0 ? "" : undefined}>
                    {formatCount(j.effects.in_progress)}
                    {j.stuck > 0 ? (
                      <span className="badge" data-tone="warning" title="In progress with an expired lease">
                        {formatCount(j.stuck)} stuck
                      </span>
                    ) : null}
                  </td>
                  <Num value={j.effects.failed} tone="danger" />
                  <Num value={j.effects.abandoned} tone="warning" />
                  <Num value={j.claims} />
                  <Num value={j.duplicateSuppressions} />
                  <td className="num" data-zero={deliveries === 0 || j.duplicateSuppressions === 0 ? "" : undefined}>
                    {deliveries > 0 ? formatPercent(j.duplicateSuppressions / deliveries) : "–"}
                  </td>
                  <Num value={j.uncaughtViolations} tone="danger" />
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
