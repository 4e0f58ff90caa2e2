"use client";

import Link from "next/link";
import { type Column, DataTable } from "@/components/ui/data-table";
import { jobTypeHref } from "@/lib/features/keys-and-effects/keys-types";
import type { JobTypeActivity } from "@/lib/features/overview/contract";
import { formatCount } from "@/lib/format";

const count = (n: number | null) => (n === null ? "—" : formatCount(n));

/** The job type names the row; every count is a column of its own (stacked under it on a phone). */
const JOB_TYPE_COLUMNS: Column<JobTypeActivity>[] = [
  {
    id: "job-type",
    label: "Job type",
    kind: "id",
    priority: 1,
    cell: (j) => (
      <>
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
      </>
    ),
  },
  { id: "deliveries", label: "Deliveries", kind: "number", cell: (j) => count(j.deliveries) },
  { id: "redeliveries", label: "Redeliveries", kind: "number", cell: (j) => count(j.redeliveries) },
  { id: "suppressed", label: "Suppressed", kind: "number", cell: (j) => formatCount(j.suppressions) },
  { id: "claims", label: "Claims", kind: "number", cell: (j) => count(j.claims) },
  {
    id: "uncaught",
    label: "Uncaught",
    kind: "number",
    cell: (j) => formatCount(j.uncaughtViolations),
    cellProps: (j) => ({ "data-tone": j.uncaughtViolations > 0 ? "danger" : undefined }),
  },
];

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
      <DataTable
        columns={JOB_TYPE_COLUMNS}
        rows={jobTypes}
        rowKey={(j) => j.jobType}
        rowProps={(j) => ({ "data-testid": "job-type-row", "data-not-wired-up": j.notWiredUp ? "" : undefined })}
        labelledBy="job-activity-heading"
        empty={<span data-testid="job-types-empty">No job type reported a delivery or a claim in this range.</span>}
      />
    </section>
  );
}
