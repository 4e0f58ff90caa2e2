import type pg from "pg";
import { PROVIDER_SCHEMA } from "../lib/demo/stripe-storage";
import type { FindingKind } from "../lib/reconciliation/finding-types";

/**
 * The data bench:reconcile reads, made by PostgreSQL itself (generate_series, no row crosses the
 * wire): a reconciled day and the day before it, each with N completed `order.capture` effects of
 * tenant acme spread evenly over the day, each with its PaymentIntent in the demo provider's
 * storage, created the same second. The day before is there so the reads that leave the window
 * (the keyset's range on the provider, the unknown and late look-ups over every effects
 * partition) run against tables of the same size as the window's.
 *
 * Planted in the reconciled day, `planted` of each (0.1 % of N by default):
 * - drift: the object's amount is 101 where the outcome recorded 100;
 * - duplicate: a second object carries the key;
 * - late duplicate: an object carries a key of the day before whose outcome named another object
 *   (the provider charged again after forgetting the idempotency key);
 * - missing: the effect has no object;
 * - unknown: an object carries a key no effect has;
 * - keyless: an object carries no Onceboard metadata (a path that charged without a claim).
 */
export interface ReconcileSeed {
  n: number;
  planted: number;
  /** The reconciled day: [from, to). */
  window: { from: Date; to: Date };
  /** Provider objects created inside the window. */
  objectsInWindow: number;
  /** The findings a correct run records, by kind. */
  expected: Record<FindingKind, number>;
}

export const SEED_TENANT = "acme";
export const SEED_JOB_TYPE = "order.capture";

/**
 * `effectsDb` has the library's schema first on its search_path; `providerDb` reaches the
 * provider's schema (it is named). `day` is the reconciled day's UTC midnight; the day before it
 * must have its effects partition.
 */
export async function seedReconcileDays(
  effectsDb: pg.Pool,
  providerDb: pg.Pool,
  { n, day, planted = Math.max(1, Math.round(n / 1000)) }: { n: number; day: Date; planted?: number },
): Promise<ReconcileSeed> {
  if (6 * planted > n) throw new RangeError(`bench seed: ${planted} of each disagreement do not fit in ${n} effects`);
  const from = Math.floor(day.getTime() / 1000);
  const before = from - 86_400;
  // Effect i of a day starts at second floor((i - 1) * 86400 / n) of it; its object is created then too.
  const at = (dayStart: string) => `(${dayStart}::bigint + ((i - 1) * 86400::bigint) / $1::bigint)`;
  const effects = (prefix: string, dayStart: string, objectPrefix: string) => `
    INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, outcome, created_at, updated_at, completed_at)
    SELECT '${SEED_TENANT}', '${prefix}' || i, '${SEED_JOB_TYPE}', 'completed', 'external', 1,
           jsonb_build_object('provider_object_id', '${objectPrefix}' || i, 'amount', 100, 'currency', 'usd', 'status', 'succeeded'),
           to_timestamp(${at(dayStart)}), to_timestamp(${at(dayStart)}), to_timestamp(${at(dayStart)})
      FROM generate_series(1, $1::bigint) AS i`;
  // Two days' effects, in parallel with the provider's objects below (separate connections).
  const effectsDone = (async () => {
    await effectsDb.query(effects("capture:bench-prev-", "$2", "pi_prev_"), [n, before]);
    await effectsDb.query(effects("capture:bench-", "$2", "pi_bench_"), [n, from]);
  })();

  const object = (idExpr: string, amountExpr: string, metadataExpr: string, createdExpr: string) =>
    `SELECT ${idExpr}, 'payment_intent', ${amountExpr}, 'usd', 'succeeded', ${metadataExpr}, ${createdExpr}`;
  const meta = (keyExpr: string) => `jsonb_build_object('onceboard_key', ${keyExpr}, 'onceboard_tenant', '${SEED_TENANT}')`;
  const insert = `INSERT INTO ${PROVIDER_SCHEMA}.objects (id, kind, amount, currency, status, metadata, created)`;
  const objectsDone = (async () => {
    // The day before: every effect has its object.
    await providerDb.query(
      `${insert} ${object("'pi_prev_' || i", "100", meta("'capture:bench-prev-' || i"), at("$2"))} FROM generate_series(1, $1::bigint) AS i`,
      [n, before],
    );
    // The day: effects 1..planted drift, planted+1..2·planted are duplicated, the last `planted` are missing.
    await providerDb.query(
      `${insert} ${object("'pi_bench_' || i", "CASE WHEN i <= $3 THEN 101 ELSE 100 END", meta("'capture:bench-' || i"), at("$2"))}
         FROM generate_series(1, $1::bigint - $3) AS i`,
      [n, from, planted],
    );
    // The planted extras, spread over the day (by i of the effect they sit beside).
    const extra = (idPrefix: string, metadataExpr: string) =>
      `${insert} ${object(`'${idPrefix}' || i`, "100", metadataExpr, at("$2"))} FROM generate_series($3::bigint + 1, 2 * $3::bigint) AS i`;
    await providerDb.query(extra("pi_bench_dup_", meta("'capture:bench-' || i")), [n, from, planted]);
    await providerDb.query(extra("pi_bench_late_", meta("'capture:bench-prev-' || i")), [n, from, planted]);
    await providerDb.query(extra("pi_bench_unknown_", meta("'capture:ghost-' || i")), [n, from, planted]);
    await providerDb.query(extra("pi_bench_keyless_", "'{}'::jsonb"), [n, from, planted]);
  })();
  await Promise.all([effectsDone, objectsDone]);
  // As autovacuum would have by the time a day is reconciled: statistics, and hint bits set.
  await Promise.all([effectsDb.query("VACUUM ANALYZE effects"), providerDb.query(`VACUUM ANALYZE ${PROVIDER_SCHEMA}.objects`)]);
  return {
    n,
    planted,
    window: { from: new Date(from * 1000), to: new Date((from + 86_400) * 1000) },
    objectsInWindow: n - planted + 4 * planted,
    expected: {
      duplicated_at_provider: 2 * planted,
      missing_at_provider: planted,
      unknown_to_onceboard: 2 * planted,
      drift: planted,
      pending: 0,
    },
  };
}
