/**
 * The kinds of disagreement a run records (the CHECK of reconciliation_findings.kind): the one
 * definition the reconciler, its metrics and the console (and its components, in the browser) use.
 */
export const FINDING_KINDS = [
  "duplicated_at_provider",
  "missing_at_provider",
  "unknown_to_onceboard",
  "drift",
  "pending",
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];
