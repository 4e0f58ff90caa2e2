import type { Queryable } from "./db-types";
import { PROVIDER_SCHEMA } from "./stripe-storage";

/**
 * demo:verify's ground truth for reconciliation: the findings the reconciler must record for a
 * window, from what the demo itself planted, compared kind by kind with the findings its runs
 * recorded. Planted:
 * - by the Stripe-compatible server (its `injections`): duplicate → duplicated_at_provider, lost →
 *   missing_at_provider, drift → drift, keyless → unknown_to_onceboard (the object without a key)
 *   and missing_at_provider (its effect, whose key no object carries);
 * - at the mailer, missing_at_provider ("never sent"): the receipts the workers' crash fault killed
 *   between claim and send (demo_unsent_receipts), and every abandoned receipt the mailer's own
 *   storage holds no message for, read straight from that storage rather than through its API: a
 *   crash kills every job in flight in its worker, so a receipt claimed by another job of the same
 *   process is abandoned unsent too, as are the history's abandoned receipts.
 * A finding is named by its identity (`<provider>:key:<tenant>:<key>`, `<provider>:object:<id>`),
 * as the reconciler names it. Only effects created inside the window count, as in a run.
 *
 * An effect still in progress when the run compares (its worker was killed after the provider's
 * call and before the claim completed, or after claiming a receipt and before sending it, and no
 * takeover has redone or abandoned it yet) has no outcome to compare: the reconciler calls its
 * absence pending, and cannot see a drift in an amount it has not recorded. Its lost, keyless and
 * drifted objects and its unsent receipt are expected once it completes or is abandoned, and
 * counted apart until then (`inProgress`), so the comparison never depends on when a crash fell.
 */
const TRUTH_KINDS = ["duplicated_at_provider", "missing_at_provider", "unknown_to_onceboard", "drift"] as const;
type TruthKind = (typeof TRUTH_KINDS)[number];

const EXPECTED_SQL = `
WITH planted AS (
  SELECT i.disagreement, i.object_id, i.onceboard_key AS key, i.onceboard_tenant AS tenant_id, e.status = 'in_progress' AS in_progress
    FROM ${PROVIDER_SCHEMA}.injections i
    JOIN effects e ON e.tenant_id = i.onceboard_tenant AND e.key = i.onceboard_key
   WHERE e.created_at >= $1 AND e.created_at < $2
)
SELECT 'duplicated_at_provider' AS kind, format('stripe:key:%s:%s', tenant_id, key) AS identity FROM planted WHERE disagreement = 'duplicate'
UNION
SELECT 'missing_at_provider', format('stripe:key:%s:%s', tenant_id, key) FROM planted WHERE disagreement IN ('lost', 'keyless') AND NOT in_progress
UNION
SELECT 'drift', format('stripe:key:%s:%s', tenant_id, key) FROM planted WHERE disagreement = 'drift' AND NOT in_progress
UNION
SELECT 'unknown_to_onceboard', format('stripe:object:%s', object_id) FROM planted WHERE disagreement = 'keyless'
UNION
SELECT 'missing_at_provider', format('mailer:key:%s:%s', u.tenant_id, u.effect_key)
  FROM demo_unsent_receipts u JOIN effects e ON e.tenant_id = u.tenant_id AND e.key = u.effect_key
 WHERE e.created_at >= $1 AND e.created_at < $2 AND e.status <> 'in_progress'
UNION
SELECT 'missing_at_provider', format('mailer:key:%s:%s', e.tenant_id, e.key)
  FROM effects e
 WHERE e.status = 'abandoned' AND e.key LIKE 'receipt:%' AND e.created_at >= $1 AND e.created_at < $2
   AND NOT EXISTS (SELECT 1 FROM ${PROVIDER_SCHEMA}.messages msg
                    WHERE msg.onceboard_tenant = e.tenant_id AND msg.onceboard_key = e.key)`;

interface KindComparison {
  kind: TruthKind;
  planted: number;
  found: number;
  /** Planted and not found, plus found and not planted. */
  mismatches: number;
  missed: string[];
  unexpected: string[];
}

interface ReconciliationTruth {
  kinds: KindComparison[];
  mismatches: number;
  /** Lost, keyless or drifted objects planted on effects still in progress: expected once they complete. */
  inProgress: number;
}

const IN_PROGRESS_SQL = `
SELECT (SELECT count(*)::int
          FROM ${PROVIDER_SCHEMA}.injections i
          JOIN effects e ON e.tenant_id = i.onceboard_tenant AND e.key = i.onceboard_key
         WHERE e.created_at >= $1 AND e.created_at < $2 AND e.status = 'in_progress' AND i.disagreement IN ('lost', 'keyless', 'drift'))
     + (SELECT count(*)::int
          FROM demo_unsent_receipts u JOIN effects e ON e.tenant_id = u.tenant_id AND e.key = u.effect_key
         WHERE e.created_at >= $1 AND e.created_at < $2 AND e.status = 'in_progress') AS n`;

/** Compares what was planted in [from, to) with the findings the runs `runIds` recorded (their last sighting). */
export async function compareWithPlanted(
  db: Queryable,
  window: { from: Date; to: Date },
  runIds: number[],
): Promise<ReconciliationTruth> {
  const expected = await db.query<{ kind: TruthKind; identity: string }>(EXPECTED_SQL, [window.from, window.to]);
  const inProgress = await db.query<{ n: number }>(IN_PROGRESS_SQL, [window.from, window.to]);
  const found = await db.query<{ kind: string; identity: string }>(
    "SELECT kind, identity FROM reconciliation_findings WHERE last_run_id = ANY($1::bigint[]) AND kind <> 'pending'",
    [runIds],
  );
  const kinds = TRUTH_KINDS.map((kind): KindComparison => {
    const want = new Set(expected.rows.filter((r) => r.kind === kind).map((r) => r.identity));
    const got = new Set(found.rows.filter((r) => r.kind === kind).map((r) => r.identity));
    const missed = [...want].filter((id) => !got.has(id)).sort();
    const unexpected = [...got].filter((id) => !want.has(id)).sort();
    return { kind, planted: want.size, found: got.size, mismatches: missed.length + unexpected.length, missed, unexpected };
  });
  return { kinds, mismatches: kinds.reduce((n, k) => n + k.mismatches, 0), inProgress: inProgress.rows[0]?.n ?? 0 };
}

/** The lines demo:verify prints for it; the last is `reconciliation … reconciliation_mismatches=<n>`. */
export function formatTruth(truth: ReconciliationTruth, window: { from: Date; to: Date }): string[] {
  const lines: string[] = [];
  for (const k of truth.kinds) {
    for (const id of k.missed) lines.push(`reconciliation missed ${k.kind}: ${id} (planted, not found)`);
    for (const id of k.unexpected) lines.push(`reconciliation unexpected ${k.kind}: ${id} (found, not planted)`);
  }
  lines.push(
    `reconciliation ${window.from.toISOString()}..${window.to.toISOString()} (planted/found) ${truth.kinds
      .map((k) => `${k.kind}=${k.planted}/${k.found}`)
      .join(" ")} planted_on_effects_in_progress=${truth.inProgress} reconciliation_mismatches=${truth.mismatches}`,
  );
  return lines;
}
