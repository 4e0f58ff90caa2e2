/**
 * The alert rules of deploy/alerts.yml, as the console knows them: name, severity, summary and
 * runbook section (docs/operations.md, "### <name>"). A test checks this list against the file.
 */
export interface AlertRule {
  name: string;
  severity: "page" | "ticket";
  summary: string;
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
];

/** The console page that shows an alert's runbook section. */
export const runbookHref = (name: string) => `/overview/runbook/${encodeURIComponent(name)}`;
