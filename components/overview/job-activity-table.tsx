"use client";

import Link from "next/link";
import { jobTypeHref } from "@/lib/console/keys-types";
import type { JobTypeActivity } from "@/lib/console/overview-types";
import { formatCount } from "@/lib/format";

export function JobActivityTable({ jobTypes }: { jobTypes: JobTypeActivity[] }) {
  return (
    <section className="panel panel-flush" aria-labelledby="job-activity-heading">
      <div className="panel-header">
        <h2 id="job-activity-heading">Job types</h2>
        <span className="panel-meta">deliveries, redeliveries and suppressions over the range</span>
      </div>
      <div className="table-scroll">
        <table className="data-table" aria-labelledby="job-activity-heading">
          <thead>
            <tr>
              <th scope="col">Job type</th>
              <th scope="col" className="num">
                Deliveries
              </th>
              <th scope="col" className="num">
                Redeliveries
              </th>
              <th scope="col" className="num">
                Suppressed
              </th>
              <th scope="col" className="num">
                Claims
              </th>
              <th scope="col" className="num">
                Uncaught
              </th>
            </tr>
          </thead>
          <tbody>
            {jobTypes.map((j) => (
              <tr key={j.jobType} data-testid="job-type-row" data-not-wired-up={j.notWiredUp ? "" : undefined}>
                <th scope="row">
                  <Link href={jobTypeHref(j.jobType)}>{j.jobType}</Link>
                  {j.notWiredUp ? (
                    <span
                      className="badge"
                      data-tone="warning"
                      title="Redelivered, yet nothing was suppressed: does the handler claim its effects?"
                    >
                      not wired up
                    </span>
                  ) : null}
                </th>
                <td className="num">{formatCount(j.deliveries)}</td>
                <td className="num">{formatCount(j.redeliveries)}</td>
                <td className="num">{formatCount(j.suppressions)}</td>
                <td className="num">{formatCount(j.claims)}</td>
                <td className="num" data-tone={j.uncaughtViolations > 0 ? "danger" : undefined}>
                  {formatCount(j.uncaughtViolations)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
