"use client";

import Link from "next/link";
import { jobTypeHref } from "@/lib/features/keys-and-effects/keys-types";
import type { JobTypeActivity } from "@/lib/features/overview/contract";
import { formatCount } from "@/lib/format";

/**
 * `tenant`: the tenant filter; with it, `tenantCounts` says Suppressed and Uncaught are that
 * tenant's, and the header says the rest are every tenant's (the per-minute rollups carry none).
 */
export function JobActivityTable({
  jobTypes,
  tenant = null,
  tenantCounts = false,
  fleetWithheld = false,
}: {
  jobTypes: JobTypeActivity[];
  tenant?: string | null;
  tenantCounts?: boolean;
  /** A tenant session: deliveries, redeliveries and claims exist only for every tenant and are not shown. */
  fleetWithheld?: boolean;
}) {
  const count = (n: number | null) => (n === null ? "—" : formatCount(n));
  return (
    <section className="panel panel-flush" aria-labelledby="job-activity-heading" data-testid="job-types">
      <div className="panel-header">
        <h2 id="job-activity-heading">Job types</h2>
        <span className="panel-meta" data-testid="job-types-scope">
          {tenant === null
            ? "deliveries, redeliveries and suppressions over the range"
            : fleetWithheld
              ? `suppressed and uncaught: ${tenant}'s; deliveries, redeliveries and claims are counted only for every tenant and not shown`
              : tenantCounts
                ? `suppressed and uncaught: ${tenant}'s; deliveries, redeliveries and claims: all tenants`
                : "all tenants"}
        </span>
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
            {jobTypes.length === 0 ? (
              <tr data-testid="job-types-empty">
                <td colSpan={6} className="muted">
                  No job type reported a delivery or a claim in this range.
                </td>
              </tr>
            ) : null}
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
                <td className="num">{count(j.deliveries)}</td>
                <td className="num">{count(j.redeliveries)}</td>
                <td className="num">{formatCount(j.suppressions)}</td>
                <td className="num">{count(j.claims)}</td>
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
