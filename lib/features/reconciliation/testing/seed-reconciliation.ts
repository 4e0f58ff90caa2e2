import type { Queryable } from "../../../db/types";

/** The seed's tenants, and the key of each one's finding (a tenant's key never appears in another's answer). */
export const RECON_SEED = {
  provider: "stripe",
  tenants: ["acme", "globex", "initech"] as const,
  /** The duplicated-at-provider finding's key, per tenant. */
  duplicateKey: (tenant: string) => `capture:${tenant}-ord-dup`,
  /** The missing-at-provider finding's key, per tenant. */
  missingKey: (tenant: string) => `capture:${tenant}-ord-lost`,
  /** The two PaymentIntents of a tenant's duplicate. */
  duplicateObjects: (tenant: string) => [`pi_${tenant}_dup_1`, `pi_${tenant}_dup_2`],
  /** The platform-only finding: a PaymentIntent naming no tenant and no key. */
  orphanObject: "pi_orphan_legacy",
  /** A secret in each stored outcome: the redaction hook must keep it off every page. */
  outcomeSecret: (tenant: string) => `sk_live_${tenant}_secret`,
  /** Findings per tenant: a duplicate, a missing one, a drift. */
  perTenant: 3,
};

/**
 * Reconciliation rows as recon's reconciler writes them: a completed run over the last hour of
 * Stripe (and its coverage), a running one, a failed one; per tenant a duplicated-at-provider, a
 * missing-at-provider and a drift finding; one unknown-to-Onceboard finding with no tenant.
 */
export async function seedReconciliation(db: Queryable, now: Date = new Date()): Promise<{ completedRunId: string }> {
  const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000);
  const run = async (values: unknown[]) =>
    (
      await db.query<{ id: string }>(
        `INSERT INTO reconciliation_runs (provider, window_from, window_to, grace_seconds, status, trigger, requested_by,
                                          started_at, finished_at, heartbeat_at, checkpoint, objects_seen, effects_seen,
                                          matched, counts, error)
         VALUES ($1, $2, $3, 300, $4, $5, $6, $7, $8, $9, NULL, $10, $11, $12, $13, $14) RETURNING id::text AS id`,
        values,
      )
    ).rows[0]?.id as string;
  const counts = { duplicated_at_provider: 3, missing_at_provider: 3, unknown_to_onceboard: 1, drift: 3, pending: 0 };
  const completedRunId = await run([
    RECON_SEED.provider,
    at(24 * 60),
    at(10),
    "completed",
    "schedule",
    null,
    at(6),
    at(4),
    at(4),
    1200,
    1190,
    1180,
    JSON.stringify(counts),
    null,
  ]);
  await run([
    RECON_SEED.provider,
    at(10),
    at(0),
    "running",
    "manual",
    "admin@platform",
    at(1),
    null,
    now,
    420,
    400,
    398,
    "{}",
    null,
  ]);
  await run([
    "mailer",
    at(24 * 60),
    at(10),
    "failed",
    "schedule",
    null,
    at(30),
    at(29),
    at(29),
    0,
    0,
    0,
    "{}",
    "the provider answered 401: invalid API key",
  ]);
  await db.query(
    `INSERT INTO reconciliation_coverage (provider, window_from, window_to, run_id, completed_at)
     VALUES ($1, $2, $3, $4, $5)`,
    [RECON_SEED.provider, at(24 * 60), at(10), completedRunId, at(4)],
  );
  const finding = (values: unknown[]) =>
    db.query(
      `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, job_type, effect_key, provider_object_ids,
                                            ours, theirs, detail, first_run_id, last_run_id, first_seen_at, last_seen_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $12)`,
      values,
    );
  const created = Math.floor(at(60).getTime() / 1000);
  let minute = 5;
  for (const tenant of RECON_SEED.tenants) {
    const ours = (key: string, status: string) =>
      JSON.stringify({
        key,
        status,
        attempt: 1,
        outcome: { paymentIntent: `pi_${tenant}_dup_1`, api_key: RECON_SEED.outcomeSecret(tenant) },
        provider_key: `ob_${tenant}_${key}`,
        created_at: at(61).toISOString(),
      });
    const [first, second] = RECON_SEED.duplicateObjects(tenant);
    const dupKey = RECON_SEED.duplicateKey(tenant);
    await finding([
      `stripe:duplicated_at_provider:${tenant}:${dupKey}`,
      RECON_SEED.provider,
      "duplicated_at_provider",
      tenant,
      "order.capture",
      dupKey,
      [first, second],
      ours(dupKey, "completed"),
      JSON.stringify([
        { id: first, amount: 4200, currency: "usd", status: "succeeded", created, metadata: { onceboard_tenant: tenant } },
        { id: second, amount: 4200, currency: "usd", status: "succeeded", created: created + 90000, metadata: {} },
      ]),
      `2 PaymentIntents carry ${dupKey}`,
      completedRunId,
      at(minute++),
    ]);
    const lostKey = RECON_SEED.missingKey(tenant);
    await finding([
      `stripe:missing_at_provider:${tenant}:${lostKey}`,
      RECON_SEED.provider,
      "missing_at_provider",
      tenant,
      "order.capture",
      lostKey,
      [],
      ours(lostKey, "completed"),
      "[]",
      `${lostKey} completed here; no PaymentIntent carries it`,
      completedRunId,
      at(minute++),
    ]);
    const driftKey = `capture:${tenant}-ord-drift`;
    await finding([
      `stripe:drift:${tenant}:${driftKey}`,
      RECON_SEED.provider,
      "drift",
      tenant,
      "order.refund",
      driftKey,
      [`pi_${tenant}_drift`],
      ours(driftKey, "completed"),
      JSON.stringify([{ id: `pi_${tenant}_drift`, amount: 999, currency: "usd", status: "succeeded", created }]),
      `amount differs: 4200 recorded, 999 at the provider`,
      completedRunId,
      at(minute++),
    ]);
  }
  await finding([
    `stripe:unknown_to_onceboard:${RECON_SEED.orphanObject}`,
    RECON_SEED.provider,
    "unknown_to_onceboard",
    null,
    "order.capture",
    null,
    [RECON_SEED.orphanObject],
    null,
    JSON.stringify([{ id: RECON_SEED.orphanObject, amount: 100, currency: "usd", status: "succeeded", created }]),
    "a PaymentIntent with no onceboard_key: a path charged without a claim",
    completedRunId,
    at(minute++),
  ]);
  return { completedRunId };
}

/** The acme effects the seeded findings and coverage are about (the Keys page's provider side). */
export const RECONCILED_EFFECTS = {
  tenant: "acme",
  /** Covered by the completed run, no finding: "1 payment at Stripe (pi_acme_ok)". */
  cleanKey: "capture:acme-ord-ok",
  cleanObject: "pi_acme_ok",
  /** Created after the covered window: no run has looked at it. */
  uncoveredKey: "capture:acme-ord-new",
  /** A job type no provider holds. */
  unmappedKey: "mark-paid:acme-ord-ok",
};

/**
 * Acme's effects behind the seeded findings, plus a covered key with no finding, an uncovered one
 * and one of a job type no provider holds. Needs effect partitions for the last two hours.
 */
export async function seedReconciledEffects(db: Queryable, now: Date = new Date()): Promise<void> {
  const effect = (key: string, jobType: string, minutesAgo: number, outcome: unknown) =>
    db.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, outcome, created_at, completed_at)
       VALUES ($1, $2, $3, 'completed', 'external', 1, $4, $5, $5)`,
      [RECONCILED_EFFECTS.tenant, key, jobType, JSON.stringify(outcome), new Date(now.getTime() - minutesAgo * 60_000)],
    );
  await effect(RECONCILED_EFFECTS.cleanKey, "order.capture", 60, {
    provider_object_id: RECONCILED_EFFECTS.cleanObject,
    amount: 4200,
  });
  await effect(RECON_SEED.duplicateKey("acme"), "order.capture", 61, { provider_object_id: "pi_acme_dup_1", amount: 4200 });
  await effect(RECON_SEED.missingKey("acme"), "order.capture", 61, { provider_object_id: "pi_acme_lost", amount: 4200 });
  await effect(RECONCILED_EFFECTS.uncoveredKey, "order.capture", 2, { provider_object_id: "pi_acme_new" });
  await effect(RECONCILED_EFFECTS.unmappedKey, "order.paid", 60, { ok: true });
}

/** What seedReconciliationLoad adds: reruns of one window, and one tenant's long list of drifts. */
export const RECON_LOAD = {
  /** Earlier runs of the seed's completed Stripe window (the scheduler reruns a window every few minutes). */
  reruns: 7,
  /** The tenant whose open findings fill more than a screen; no other browser test counts its findings. */
  tenant: "umbrella",
  findings: 40,
  /** The drift findings' keys, objects and amounts: five-digit amounts a cut column would show as three. */
  driftKey: (n: number) => `capture:umbrella-ord-${String(n).padStart(3, "0")}`,
  driftObject: (n: number) => `pi_umbrella_${String(n).padStart(3, "0")}_3Kx9ZqL2eZvKYlo2C1b2c3d4`,
  recordedAmount: (n: number) => 17_100 + n,
  providerAmount: (n: number) => 17_101 + n,
};

/**
 * What 40 minutes of the demo leave (issue 38's screenshots): the completed Stripe window of
 * seedReconciliation run RECON_LOAD.reruns more times before its latest run, and RECON_LOAD.findings
 * open drift findings of one tenant, newest first by number (1 is the newest). Call after
 * seedReconciliation with the same `now`.
 */
export async function seedReconciliationLoad(db: Queryable, now: Date = new Date()): Promise<void> {
  const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000);
  const counts = { duplicated_at_provider: 3, missing_at_provider: 3, unknown_to_onceboard: 1, drift: 3, pending: 0 };
  // The seed's latest run of this window started 6 minutes ago; its reruns every 3 minutes before.
  await db.query(
    `INSERT INTO reconciliation_runs (provider, window_from, window_to, grace_seconds, status, trigger, started_at, finished_at,
                                      heartbeat_at, objects_seen, effects_seen, matched, counts)
     SELECT $1, $2, $3, 300, 'completed', 'schedule', $4::timestamptz - n * interval '3 minutes',
            $4::timestamptz - n * interval '3 minutes' + interval '90 seconds', $4::timestamptz - n * interval '3 minutes' + interval '90 seconds',
            1200 - n, 1190 - n, 1180 - n, $5
       FROM generate_series(1, $6::int) n`,
    [RECON_SEED.provider, at(24 * 60), at(10), at(6), JSON.stringify(counts), RECON_LOAD.reruns],
  );
  const created = Math.floor(at(50).getTime() / 1000);
  for (let n = 1; n <= RECON_LOAD.findings; n++) {
    const key = RECON_LOAD.driftKey(n);
    const object = RECON_LOAD.driftObject(n);
    await db.query(
      `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, job_type, effect_key, provider_object_ids,
                                            ours, theirs, detail, first_seen_at, last_seen_at)
       VALUES ($1, $2, 'drift', $3, 'order.capture', $4, $5, $6, $7, $8, $9, $9)`,
      [
        `stripe:key:${RECON_LOAD.tenant}:${key}`,
        RECON_SEED.provider,
        RECON_LOAD.tenant,
        key,
        [object],
        JSON.stringify({
          key,
          status: "completed",
          attempt: 1,
          outcome: { provider_object_id: object, amount: RECON_LOAD.recordedAmount(n), currency: "usd", status: "succeeded" },
          provider_key: `ob_${RECON_LOAD.tenant}_${n}`,
          created_at: at(51).toISOString(),
        }),
        JSON.stringify([
          { id: object, amount: RECON_LOAD.providerAmount(n), currency: "usd", status: "succeeded", created, metadata: {} },
        ]),
        `${key}: amount ${RECON_LOAD.recordedAmount(n)} here, ${RECON_LOAD.providerAmount(n)} at the provider`,
        new Date(at(20).getTime() - n * 1000),
      ],
    );
  }
}
