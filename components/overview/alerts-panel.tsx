"use client";

import Link from "next/link";
import { CamelCaseName } from "@/components/ui/word-breaks";
import type { AlertStatus } from "@/lib/features/overview/contract";
import { formatCount } from "@/lib/format";

const STATE_TONE: Record<AlertStatus["state"], string | undefined> = {
  firing: "danger",
  pending: "warning",
  inactive: undefined,
  unknown: "muted",
};

/** `everyTenant`: a tenant filter is set, and alert rules carry no tenant, so the panel says so. */
export function AlertsPanel({
  alerts,
  source,
  everyTenant = false,
  withheldText,
}: {
  alerts: AlertStatus[];
  source: string;
  everyTenant?: boolean;
  /** Set when the alerts are not shown to this session, saying why. */
  withheldText?: string;
}) {
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
          {everyTenant ? <span data-testid="alerts-scope"> · all tenants (alert rules carry no tenant)</span> : null}
        </span>
      </div>
      {withheldText ? (
        <p className="panel-empty" data-testid="alerts-withheld">
          {withheldText} The alert rules count every tenant&apos;s events.
        </p>
      ) : null}
      <ul className="alert-list">
        {alerts.map((a) => (
          <li key={a.name} data-testid="alert" data-state={a.state}>
            <span className="badge" data-tone={STATE_TONE[a.state]}>
              {a.state}
            </span>
            <span className="alert-name">
              <strong data-testid="alert-name">
                <CamelCaseName name={a.name} />
              </strong>{" "}
              <span className="muted">({a.severity})</span>
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
