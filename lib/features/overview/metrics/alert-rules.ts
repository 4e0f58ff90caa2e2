/**
 * The alert rules of deploy/alerts.yml and deploy/reconcile-alerts.yml, as the console knows them: name, severity, summary and
 * runbook section (docs/operations.md, "### <name>"). A test checks this list against the file.
 */
interface AlertRule {
  name: string;
  severity: "page" | "ticket";
  summary: string;
  /** The rule file that defines it (Prometheus loads both: deploy/prometheus.yml rule_files). */
  file?: "deploy/reconcile-alerts.yml";
}

export const ALERT_RULES: AlertRule[] = [
  {
    name: "OnceboardUncaughtUniqueViolation",
    severity: "page",
    summary: "A handler hit a unique constraint with its own writes",
  },
  { name: "OnceboardRedeliveriesNotSuppressed", severity: "ticket", summary: "Redeliveries but no duplicate suppressions" },
  { name: "OnceboardKeyReuse", severity: "ticket", summary: "An effect key was reused with a different payload" },
  { name: "OnceboardLateDuplicates", severity: "ticket", summary: "Duplicates arrive more than 2 days after the first delivery" },
  { name: "OnceboardRollupFlushFailing", severity: "ticket", summary: "Workers cannot flush per-minute rollups to PostgreSQL" },
  {
    name: "OnceboardProviderDuplicateCharge",
    severity: "page",
    summary: "More than one provider object carries one effect key (a double charge)",
    file: "deploy/reconcile-alerts.yml",
  },
  {
    name: "OnceboardReconcileFindings",
    severity: "ticket",
    summary: "Missing, unknown or drifted provider objects open for over an hour",
    file: "deploy/reconcile-alerts.yml",
  },
  {
    name: "OnceboardReconcileFailing",
    severity: "ticket",
    summary: "Reconciliation runs with a provider keep failing",
    file: "deploy/reconcile-alerts.yml",
  },
];

/** The console page that shows an alert's runbook section. */
export const runbookHref = (name: string) => `/overview/runbook/${encodeURIComponent(name)}`;
