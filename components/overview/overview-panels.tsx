"use client";

import Link from "next/link";
import { useSearchParams } from "next/navigation";
import type { AlertStatus, JobTypeActivity, StuckClaim, TenantRow } from "@/lib/console/overview-types";
import { type ViolationGroup, violationsHref } from "@/lib/console/violations-types";
import { formatCountOf, formatUtc } from "@/lib/format";
import { formatCount } from "./format";
import { withParams } from "./overview-filters";
import { jobTypeHref, keyHref } from "./overview-links";

export function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

const STATE_TONE: Record<AlertStatus["state"], string | undefined> = {
  firing: "danger",
  pending: "warning",
  inactive: undefined,
  unknown: "muted",
};

export function AlertsPanel({ alerts, source }: { alerts: AlertStatus[]; source: string }) {
  const firing = alerts.filter((a) => a.state === "firing").length;
  return (
    <section className="panel panel-flush" aria-labelledby="alerts-heading" data-testid="alerts">
      <div className="panel-header">
        <h2 id="alerts-heading">
          Alerts
          {firing > 0 ? (
            <span className="badge" data-tone="danger">
              {firing} firing
            </span>
          ) : null}
        </h2>
        <span className="panel-meta">
          {source === "prometheus" ? "state from Prometheus" : "deploy/alerts.yml evaluated over the rollups"}
        </span>
      </div>
      <ul className="alert-list">
        {alerts.map((a) => (
          <li key={a.name} data-testid="alert" data-state={a.state}>
            <span className="badge" data-tone={STATE_TONE[a.state]}>
              {a.state}
            </span>
            <span className="alert-name">
              <strong>{a.name}</strong> <span className="muted">({a.severity})</span>
              <br />
              <span className="muted">{a.summary}</span>
              {a.instances.length > 0 ? (
                <span className="alert-instances">
                  {a.instances
                    .map(
                      (i) =>
                        Object.entries(i.labels)
                          .map(([k, v]) => `${k}=${v}`)
                          .join(", ") + (i.value !== null ? ` (${formatCount(Math.round(i.value))})` : ""),
                    )
                    .join("; ")}
                </span>
              ) : null}
              {a.note ? <span className="muted alert-note">{a.note}</span> : null}
            </span>
            <Link href={a.runbook} className="alert-runbook">
              Runbook
            </Link>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function ViolationsBanner({
  total,
  groups,
  range,
}: {
  total: number;
  groups: ViolationGroup[];
  range: { from: string; to: string };
}) {
  if (total === 0 && groups.length === 0) return null;
  const count = Math.max(
    total,
    groups.reduce((a, g) => a + g.count, 0),
  );
  return (
    <div className="banner" data-tone="danger" role="alert" data-testid="violations-banner">
      <div>
        <strong>{`${formatCountOf(count, "uncaught unique violation")} in this range.`}</strong> A handler hit a unique constraint
        with its own writes: a duplicate got past its guard.{" "}
        <Link href={violationsHref({ from: range.from, to: range.to })} data-testid="violations-link">
          Every affected key
        </Link>
        {groups.length > 0 ? (
          <ul className="violation-keys">
            {groups.slice(0, 8).map((g) => (
              <li key={`${g.tenant}|${g.jobType}|${g.constraint}`}>
                <Link
                  href={violationsHref({
                    tenant: g.tenant,
                    jobType: g.jobType,
                    constraint: g.constraint,
                    from: range.from,
                    to: range.to,
                  })}
                  data-testid="violation-group"
                >
                  {`${formatCount(g.count)}× ${g.constraint}`}
                </Link>{" "}
                <span className="muted">
                  tenant {g.tenant} · {g.jobType} · {formatCountOf(g.keys, "key")} · last{" "}
                  {formatUtc(g.lastSeen, { seconds: false })}
                </span>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    </div>
  );
}

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

export function TopTenants({ tenants }: { tenants: TenantRow[] }) {
  const searchParams = useSearchParams();
  return (
    <section className="panel panel-flush" aria-labelledby="tenants-heading" data-testid="top-tenants">
      <div className="panel-header">
        <h2 id="tenants-heading">Which tenant</h2>
        <span className="panel-meta">violations, then stuck claims, then suppressions</span>
      </div>
      {tenants.length === 0 ? (
        <p className="panel-empty muted">No tenant had a suppression, a violation or a stuck claim in this range.</p>
      ) : (
        <div className="table-scroll">
          <table className="data-table">
            <thead>
              <tr>
                <th scope="col">Tenant</th>
                <th scope="col" className="num">
                  Uncaught
                </th>
                <th scope="col" className="num">
                  Stuck
                </th>
                <th scope="col" className="num">
                  Suppressed
                </th>
              </tr>
            </thead>
            <tbody>
              {tenants.map((t) => (
                <tr key={t.tenant} data-testid="tenant-row">
                  <th scope="row">
                    <Link href={`/overview${withParams(searchParams, { tenant: t.tenant })}`} scroll={false} replace>
                      {t.tenant}
                    </Link>
                  </th>
                  <td className="num" data-tone={t.violations > 0 ? "danger" : undefined}>
                    {formatCount(t.violations)}
                  </td>
                  <td className="num" data-tone={t.stuck > 0 ? "warning" : undefined}>
                    {formatCount(t.stuck)}
                  </td>
                  <td className="num">{formatCount(t.suppressions)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function StuckClaims({ claims, total }: { claims: StuckClaim[]; total: number }) {
  return (
    <section className="panel panel-flush" aria-labelledby="stuck-heading" data-testid="stuck-claims">
      <div className="panel-header">
        <h2 id="stuck-heading">
          Stuck claims
          {total > 0 ? (
            <span className="badge" data-tone="warning">
              {formatCount(total)}
            </span>
          ) : null}
        </h2>
        <span className="panel-meta">in progress past their lease, now (whatever the range)</span>
      </div>
      {claims.length === 0 ? (
        <p className="panel-empty muted">No claim is past its lease.</p>
      ) : (
        <div className="table-scroll">
          <table className="data-table">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Tenant</th>
                <th scope="col">Job type</th>
                <th scope="col" className="num">
                  Age
                </th>
                <th scope="col" className="num">
                  Lease over by
                </th>
              </tr>
            </thead>
            <tbody>
              {claims.map((c) => (
                <tr key={`${c.tenant}|${c.key}`} data-testid="stuck-claim">
                  <th scope="row">
                    <Link href={keyHref(c.tenant, c.key)}>
                      <code>{c.key}</code>
                    </Link>
                  </th>
                  <td>{c.tenant}</td>
                  <td>{c.jobType}</td>
                  <td className="num">{duration(c.ageSeconds)}</td>
                  <td className="num">{duration(c.overdueSeconds)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
