import type { Scope } from "../../auth/scope";
import { ConfigError, loadConfig } from "../../config";
import { consoleDatabase } from "../../console/database";
import { redactMessage, redactOutcome } from "../../console/redact";
import type { Queryable } from "../../db/types";
import { providerObjectUrl, type ReconcileProvider, reconcileProviders } from "../../reconciliation/providers";
import type { FindingDetail, FindingOurs, FindingTheirs } from "./contract";
import { type FindingRow, toFindingSummary } from "./list-findings";

export interface FindingDetailRow extends FindingRow {
  ours: unknown;
  theirs: unknown;
  first_run_id: string | null;
  last_run_id: string | null;
  state_note: string | null;
  state_changed_by: string | null;
  state_changed_at: Date | null;
}

export const FINDING_COLUMNS = `id::text AS id, provider, kind, tenant_id, job_type, effect_key, provider_object_ids,
       detail, first_seen_at, last_seen_at, state, ours, theirs, first_run_id::text AS first_run_id,
       last_run_id::text AS last_run_id, state_note, state_changed_by, state_changed_at`;

// The same tenant rule as the list: a tenant scope reads its own tenant's rows; a finding with no
// tenant is the platform's.
const GET = `
SELECT ${FINDING_COLUMNS}
  FROM reconciliation_findings
 WHERE id = $1::bigint
   AND (CASE WHEN $2::text IS NULL THEN $3::boolean ELSE tenant_id = $2 END)`;

const record = (value: unknown): Record<string, unknown> | null =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
const stringOr = (value: unknown): string | null => (typeof value === "string" ? value : null);
const numberOr = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value)
    ? value
    : typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value)
      ? Number(value)
      : null;

/** A provider's creation time (Stripe: Unix seconds) or an ISO string, as ISO; anything else null. */
function instantOr(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value)) return new Date(value * 1000).toISOString();
  if (typeof value === "string" && !Number.isNaN(Date.parse(value))) return new Date(value).toISOString();
  return null;
}

/** The provider's own page for one of its objects, or null (lib/reconciliation/providers.ts providerObjectUrl). */
export type ObjectLink = (provider: string, objectId: string) => string | null;

/**
 * Links to the providers' own pages, from the providers file's objectUrl patterns: none for a
 * provider without one, and none at all when the file cannot be read (the page lists its mistakes).
 */
export function configuredObjectLinks(): ObjectLink {
  let providers: ReconcileProvider[] = [];
  try {
    providers = reconcileProviders(loadConfig());
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
  }
  return (name, objectId) => {
    const provider = providers.find((p) => p.name === name);
    return provider ? providerObjectUrl(provider, objectId) : null;
  };
}

/**
 * Our side as the reconciler recorded it (reconciliation_findings.ours), its outcome through the
 * redaction hook like every outcome the console shows. The reconciler writes snake_case; camelCase
 * names are read as well so a recorded effect in either form shows. `recorded` holds the outcome's
 * fields the reconciler compares (compare-sql.ts: provider_object_id, amount, currency, status).
 */
function toFindingOurs(value: unknown): FindingOurs | null {
  const o = record(value);
  if (!o) return null;
  const outcome = "outcome" in o ? redactOutcome(o.outcome) : null;
  const fields = record(outcome) ?? {};
  return {
    key: stringOr(o.key),
    status: stringOr(o.status),
    attempts: numberOr(o.attempts ?? o.attempt),
    outcome,
    recorded: {
      objectId: stringOr(fields.provider_object_id),
      amount: numberOr(fields.amount),
      currency: stringOr(fields.currency),
      status: stringOr(fields.status),
    },
    providerKey: stringOr(o.provider_key ?? o.providerKey),
    createdAt: instantOr(o.created_at ?? o.createdAt),
  };
}

/** Their objects: id (and its page at the provider), amount, currency, status and creation time only (metadata stays on the server). */
function toFindingTheirs(value: unknown, provider: string, objectLink: ObjectLink): FindingTheirs[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) => {
    const t = record(item);
    if (!t) return [];
    const id = stringOr(t.id);
    return [
      {
        id: id ?? "?",
        url: id === null ? null : objectLink(provider, id),
        amount: numberOr(t.amount),
        currency: stringOr(t.currency),
        status: stringOr(t.status),
        created: instantOr(t.created),
      },
    ];
  });
}

export function toFindingDetail(r: FindingDetailRow, objectLink: ObjectLink = configuredObjectLinks()): FindingDetail {
  return {
    ...toFindingSummary(r),
    ours: toFindingOurs(r.ours),
    theirs: toFindingTheirs(r.theirs, r.provider, objectLink),
    firstRunId: r.first_run_id,
    lastRunId: r.last_run_id,
    stateNote: r.state_note === null ? null : redactMessage(r.state_note),
    stateChangedBy: r.state_changed_by,
    stateChangedAt: r.state_changed_at ? r.state_changed_at.toISOString() : null,
  };
}

/** GET /api/v1/reconciliation/findings/{id}: one finding with both sides, or null (missing, or another tenant's). */
export async function getFinding(
  scope: Scope,
  id: string,
  db: Queryable = consoleDatabase(),
  objectLink: ObjectLink = configuredObjectLinks(),
): Promise<FindingDetail | null> {
  const { rows } = await db.query<FindingDetailRow>(GET, [id, scope.tenant, scope.platform]);
  return rows[0] ? toFindingDetail(rows[0], objectLink) : null;
}
