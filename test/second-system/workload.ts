import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import pino from "pino";
import { createEffects, type Effects, onceboardMetadata, providerOutcome } from "../../lib/idempotency";
import type { Planted } from "../known-system";
import { createCharge, type Payco } from "./payco";

/**
 * The second system: a billing and shipping back office, written from docs/worker-library.md,
 * docs/adapters.md and docs/reconciliation.md alone, sharing no code with the demo. Its tenants,
 * job types and key shapes are its own:
 *
 * - `invoice.settle`: one external step, `settle:<invoice>/v1`, that charges PayCo with the claim's
 *   provider key and `onceboardMetadata(claim)` in the charge's `reference`;
 * - `subscription.renew`: a job of two steps, `renew-charge:<subscription>/<period>` at PayCo and
 *   `renew-ledger:<subscription>/<period>` in its own table, in the claim's transaction;
 * - `shipment.label`: `label:<shipment>`, writing a tracking number that must be unique; PayCo
 *   holds none of it, so reconciliation never compares it.
 *
 * `writeKnownWorkload` writes a fixed workload and returns what it planted, so the tests can say
 * exactly what the console and the reconciler must report.
 */
export const TENANTS = ["northwind", "umbrella"] as const;
export const JOB_TYPES = { settle: "invoice.settle", renew: "subscription.renew", label: "shipment.label" } as const;
export const settleKey = (invoice: string) => `settle:${invoice}/v1`;

/** Each tenant's keys once the known workload is written (sorted): strings no other tenant's data holds. */
export const TENANT_KEYS: Record<(typeof TENANTS)[number], string[]> = {
  northwind: [
    "label:SHP-7001",
    "renew-charge:SUB-0042/2026-12",
    "renew-ledger:SUB-0042/2026-12",
    settleKey("INV-000101"),
    settleKey("INV-000102"),
    settleKey("INV-000103"),
    settleKey("INV-000104"),
  ],
  umbrella: ["label:SHP-8001", settleKey("INV-000201"), settleKey("INV-000202"), settleKey("INV-000203")],
};

const silent = pino({ level: "silent" });

export async function installSchema(pool: pg.Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE IF NOT EXISTS public.second_subscription_ledger (subscription text, period text, amount int, PRIMARY KEY (subscription, period));
    CREATE TABLE IF NOT EXISTS public.second_shipment_labels (tracking text CONSTRAINT second_shipment_labels_tracking_key UNIQUE)`);
}

/** A worker of the second system: its own createEffects (one per process in production). */
type Worker = Effects<pg.PoolClient>;

export function worker(pool: pg.Pool, workerId: string): Worker {
  return createEffects({ db: pool, logger: silent, flushInterval: 0, register: false, workerId });
}

/** The invoice.settle handler: one external step at PayCo. */
export function settleInvoice(
  effects: Worker,
  payco: Pick<Payco, "url" | "token">,
  delivery: { tenant: string; invoice: string; amount: number; messageId: string; attempt?: number },
) {
  return effects.once(
    {
      tenant: delivery.tenant,
      key: settleKey(delivery.invoice),
      jobType: JOB_TYPES.settle,
      policy: "external",
      messageId: delivery.messageId,
      attempt: delivery.attempt ?? 1,
      payload: { invoice: delivery.invoice, amount: delivery.amount },
    },
    async (claim) => {
      const charge = await createCharge(
        payco,
        { amount: delivery.amount, currency: "eur", reference: { ...onceboardMetadata(claim) } },
        claim.providerKey,
      );
      return providerOutcome(charge);
    },
  );
}

export async function writeKnownWorkload(pool: pg.Pool, payco: Payco): Promise<Planted> {
  await installSchema(pool);
  const a = worker(pool, "second-a");
  const b = worker(pool, "second-b");
  try {
    // northwind: two clean invoices, redelivered (one once, one twice): suppressed, charged once.
    await settleInvoice(a, payco, { tenant: "northwind", invoice: "INV-000101", amount: 1200, messageId: "nw-101" });
    await settleInvoice(b, payco, { tenant: "northwind", invoice: "INV-000101", amount: 1200, messageId: "nw-101", attempt: 2 });
    await settleInvoice(a, payco, { tenant: "northwind", invoice: "INV-000102", amount: 800, messageId: "nw-102" });
    await settleInvoice(a, payco, { tenant: "northwind", invoice: "INV-000102", amount: 800, messageId: "nw-102", attempt: 2 });
    await settleInvoice(b, payco, { tenant: "northwind", invoice: "INV-000102", amount: 800, messageId: "nw-102", attempt: 3 });

    // A crash: worker a claims INV-000103, charges PayCo and dies before completing. Its lease
    // runs out; worker b's redelivery takes the claim over and charges again with the same
    // provider key, which PayCo answers with the first charge: one charge.
    const crashed = await a.claim({
      tenant: "northwind",
      key: settleKey("INV-000103"),
      jobType: JOB_TYPES.settle,
      policy: "external",
      lease: "200ms",
      messageId: "nw-103",
      attempt: 1,
      payload: { invoice: "INV-000103", amount: 4300 },
    });
    if (crashed.kind !== "owned") throw new Error(`INV-000103's first claim was ${crashed.kind}`);
    await createCharge(
      payco,
      { amount: 4300, currency: "eur", reference: { ...onceboardMetadata(crashed.claim) } },
      crashed.claim.providerKey,
    );
    await sleep(400);
    const takeover = await settleInvoice(b, payco, {
      tenant: "northwind",
      invoice: "INV-000103",
      amount: 4300,
      messageId: "nw-103",
      attempt: 2,
    });
    if (takeover.result !== "ran") throw new Error(`INV-000103's takeover was ${takeover.result}`);

    // A double charge: PayCo carries INV-000104's one request out twice.
    payco.plant(settleKey("INV-000104"), "double");
    await settleInvoice(a, payco, { tenant: "northwind", invoice: "INV-000104", amount: 990, messageId: "nw-104" });

    // An orphan payment: a charge naming northwind and a key no effect has.
    payco.plantOrphan({
      amount: 700,
      currency: "eur",
      reference: { onceboard_key: settleKey("INV-000999"), onceboard_tenant: "northwind" },
    });

    // A subscription renewal: a charge at PayCo, then the ledger row in the claim's transaction.
    await a.job({ tenant: "northwind", jobType: JOB_TYPES.renew, messageId: "nw-sub-42" }, async (job) => {
      const charge = await job.external("renew-charge:SUB-0042/2026-12", async (claim) =>
        providerOutcome(
          await createCharge(
            payco,
            { amount: 1500, currency: "eur", reference: { ...onceboardMetadata(claim) } },
            claim.providerKey,
          ),
        ),
      );
      await job.transaction("renew-ledger:SUB-0042/2026-12", async (tx) => {
        await tx.query("INSERT INTO public.second_subscription_ledger (subscription, period, amount) VALUES ($1, $2, $3)", [
          "SUB-0042",
          "2026-12",
          (charge as { amount: number }).amount,
        ]);
      });
    });

    // An uncaught unique violation: the label handler writes its tracking number twice.
    await a
      .once({ tenant: "northwind", key: "label:SHP-7001", jobType: JOB_TYPES.label, messageId: "nw-shp-7001" }, async () => {
        await pool.query("INSERT INTO public.second_shipment_labels (tracking) VALUES ($1), ($1)", ["TRK-7001"]);
      })
      .then(
        () => {
          throw new Error("label:SHP-7001 should have violated second_shipment_labels_tracking_key");
        },
        (error: { code?: string }) => {
          if (error.code !== "23505") throw error;
        },
      );

    // umbrella: one clean invoice, one PayCo loses, one kept with another amount; a clean label.
    await settleInvoice(b, payco, { tenant: "umbrella", invoice: "INV-000201", amount: 2500, messageId: "um-201" });
    payco.plant(settleKey("INV-000202"), "lose");
    await settleInvoice(b, payco, { tenant: "umbrella", invoice: "INV-000202", amount: 3100, messageId: "um-202" });
    payco.plant(settleKey("INV-000203"), "drift");
    await settleInvoice(b, payco, { tenant: "umbrella", invoice: "INV-000203", amount: 5000, messageId: "um-203" });
    await b.once({ tenant: "umbrella", key: "label:SHP-8001", jobType: JOB_TYPES.label, messageId: "um-shp-8001" }, async () => {
      await pool.query("INSERT INTO public.second_shipment_labels (tracking) VALUES ($1)", ["TRK-8001"]);
      return { tracking: "TRK-8001" };
    });
    await a.flush();
    await b.flush();
  } finally {
    await a.close();
    await b.close();
  }
  return {
    findings: [
      ["drift", "umbrella", settleKey("INV-000203")],
      ["duplicated_at_provider", "northwind", settleKey("INV-000104")],
      ["missing_at_provider", "umbrella", settleKey("INV-000202")],
      ["unknown_to_onceboard", "northwind", settleKey("INV-000999")],
    ],
    matched: 5,
    effectsSeen: 8,
    activity: {
      // Every delivery of a step is a claim (8 invoices: 101 twice, 102 three times, 103 by the
      // crashed worker and by the takeover, 104, 201, 202, 203 once): 11; 3 were suppressed.
      [JOB_TYPES.settle]: { deliveries: 11, claims: 11, suppressions: 3, redeliveries: 4, uncaughtViolations: 0 },
      // One renewal message, two steps: one delivery, two claims.
      [JOB_TYPES.renew]: { deliveries: 1, claims: 2, suppressions: 0, redeliveries: 0, uncaughtViolations: 0 },
      [JOB_TYPES.label]: { deliveries: 2, claims: 2, suppressions: 0, redeliveries: 0, uncaughtViolations: 1 },
    },
    violations: [["northwind", "label:SHP-7001", "second_shipment_labels_tracking_key"]],
    verdicts: [
      ["northwind", settleKey("INV-000104"), "danger", /^ran once here · 2 charges at PayCo · reconciled/],
      ["northwind", "renew-charge:SUB-0042/2026-12", "ok", /^ran once here · 1 renewal charge at PayCo \(ch_/],
      ["northwind", settleKey("INV-000103"), "ok", /^completed here on attempt 2 · 1 charge at PayCo \(ch_/],
      ["umbrella", settleKey("INV-000202"), "danger", /^ran once here · no charge at PayCo/],
      [
        "umbrella",
        settleKey("INV-000203"),
        "warning",
        /^ran once here · 1 charge at PayCo \(ch_\d+\) differs from the recorded outcome/,
      ],
      // Not PayCo's: no provider side.
      ["umbrella", "label:SHP-8001", null, null],
    ],
    keyWindows: [["payco", 48 * 3600]],
    keys: TENANT_KEYS,
  };
}

/** The second system's providers file: PayCo through the generic HTTP+JSON adapter, its bearer token in PAYCO_TOKEN. */
export function secondSystemProvidersFile(payco: Pick<Payco, "listUrl">) {
  return {
    providers: [
      {
        name: "payco",
        label: "PayCo",
        objectNoun: "charge",
        jobTypes: [JOB_TYPES.settle, JOB_TYPES.renew],
        steps: [{ keyPrefix: "settle:" }, { keyPrefix: "renew-charge:", noun: "renewal charge" }],
        keyWindowHours: 48,
        keyRequired: true,
        compareFields: ["amount", "currency", "status"],
        objectUrl: "https://dashboard.payco.example/charges/{id}",
        adapter: {
          type: "http-json",
          url: payco.listUrl,
          bearerTokenEnv: "PAYCO_TOKEN",
          mapping: {
            items: "data",
            next: "next_cursor",
            id: "id",
            key: "reference.onceboard_key",
            tenant: "reference.onceboard_tenant",
            created: "created_at",
            amount: "amount",
            currency: "currency",
            status: "status",
          },
        },
      },
    ],
  };
}
