import { spawn } from "node:child_process";
import path from "node:path";
import pg from "pg";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { createEffects, type Effects } from "../idempotency";
import { HttpJsonAdapter } from "../reconciliation/http-json";
import { reconcile } from "../reconciliation/reconcile";
import { StripeAdapter, stripeClient } from "../reconciliation/stripe";
import { demoProvider } from "../reconciliation/testing/harness";
import { type DemoSteps, demoSteps, type Faults, NO_FAULTS } from "./handlers";
import {
  type DemoProviderServers,
  demoProviderClients,
  installDemoProviderSchema,
  newDemoApiKey,
  startDemoProviderServers,
} from "./provider";
import { MAILER_MAPPING } from "./providers-file";
import { compareWithPlanted, formatTruth } from "./reconciliation-truth";
import type { OrderMessage } from "./settings";
import { postgresShop } from "./shop";
import { type Disagreement, noFaults } from "./stripe-server";
import { PROVIDER_SCHEMA } from "./stripe-storage";

const ROOT = path.resolve(import.meta.dirname, "../..");
const FAST_RETRY = { retries: 2, baseDelayMs: 5, maxDelayMs: 20 };

let db: TestDatabase;
let servers: DemoProviderServers;
let effects: Effects<pg.PoolClient>;
// The demo names its tables and the library's unqualified (search_path: onceboard, onceboard_demo).
let demo: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  demo = new pg.Pool({ connectionString: db.sqlUrl, max: 6 });
  await installDemoProviderSchema(demo);
  servers = await startDemoProviderServers({ databaseUrl: db.url, apiKey: newDemoApiKey() });
  effects = createEffects({ db: demo, logger: pino({ level: "silent" }), flushInterval: 0, register: false, marked: true });
});
afterAll(async () => {
  await effects?.close();
  await servers?.close();
  await demo?.end();
  await db?.drop();
});

const order = (orderId: string, amountCents = 1200, tenant = "acme"): OrderMessage => ({
  tenant,
  orderId,
  amountCents,
  msgId: `msg-${orderId}`,
  publishedAt: new Date().toISOString(),
});

/** One order.paid delivery through the demo's steps, with the provider planting `disagreement` on its requests. */
async function pay(steps: DemoSteps, m: OrderMessage, disagreement?: Disagreement) {
  servers.stripe.faults = disagreement ? { ...noFaults(), rates: { ...noFaults().rates, [disagreement]: 1 } } : noFaults();
  try {
    await demo.query("INSERT INTO demo_orders (tenant_id, order_id, amount_cents) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [
      m.tenant,
      m.orderId,
      m.amountCents,
    ]);
    return await effects.job({ tenant: m.tenant, jobType: "order.paid", messageId: m.msgId }, async (job) => {
      const charge = await steps.capture(job, m);
      await steps.markPaid(job, m, charge.chargeId);
      await steps.receipt(job, m);
      return charge;
    });
  } finally {
    servers.stripe.faults = noFaults();
  }
}

async function reconcileBoth(window: { from: Date; to: Date }) {
  const stripe = stripeClient({
    STRIPE_API_KEY: servers.endpoints.apiKey,
    STRIPE_HOST: "127.0.0.1",
    STRIPE_PORT: servers.stripe.port,
    STRIPE_PROTOCOL: "http",
  });
  const runs = [];
  for (const [name, adapter] of [
    ["stripe", new StripeAdapter(stripe, FAST_RETRY)],
    ["mailer", new HttpJsonAdapter("mailer", servers.mailer.url, MAILER_MAPPING, { pageLimit: 2, retry: FAST_RETRY })],
  ] as const) {
    runs.push(
      await reconcile({
        pool: db.pool,
        adapter,
        provider: demoProvider(name, { mailerUrl: servers.mailer.url }, { STRIPE_API_KEY: servers.endpoints.apiKey }),
        window,
        graceSeconds: 0,
        trigger: "manual",
      }),
    );
  }
  return runs;
}

describe("the demo's handlers against its provider process, through the stripe client and the mailer's HTTP API", () => {
  it("charges once per key, records the PaymentIntent with the outcome, and mails what the mailer then lists", async () => {
    const steps = demoSteps(postgresShop(demo), NO_FAULTS, demoProviderClients(servers.endpoints));
    const m = order("p-clean", 1500);
    const first = await pay(steps, m);
    // A re-published copy: every step is a duplicate, nothing is charged or mailed twice.
    const again = await pay(steps, { ...m, msgId: "msg-p-clean-republished" });
    expect(again.steps.map((s) => s.result)).toEqual(["duplicate", "duplicate", "duplicate"]);
    expect(again.value.chargeId).toBe(first.value.chargeId);
    const { rows: intents } = await demo.query(
      `SELECT id, amount::int AS amount, metadata FROM ${PROVIDER_SCHEMA}.objects WHERE metadata->>'onceboard_key' = 'capture:p-clean'`,
    );
    expect(intents).toEqual([
      {
        id: first.value.chargeId,
        amount: 1500,
        metadata: { onceboard_key: "capture:p-clean", onceboard_tenant: "acme", order_id: "p-clean" },
      },
    ]);
    const { rows: outcome } = await demo.query("SELECT outcome FROM effects WHERE key = 'capture:p-clean'");
    expect(outcome[0].outcome).toMatchObject({
      provider_object_id: first.value.chargeId,
      amount: 1500,
      currency: "usd",
      status: "succeeded",
    });
    const listed = await servers.mailer.pool.query(`SELECT recipient FROM ${PROVIDER_SCHEMA}.messages`);
    expect(listed.rows).toEqual([{ recipient: "billing+p-clean@acme.example" }]);
    // The same Idempotency-Key again, straight through the client: the provider answers the first PaymentIntent.
    const { stripe } = demoProviderClients(servers.endpoints);
    const replay1 = await stripe.paymentIntents.create({ amount: 5, currency: "usd" }, { idempotencyKey: "k-replay" });
    const replay2 = await stripe.paymentIntents.create({ amount: 5, currency: "usd" }, { idempotencyKey: "k-replay" });
    expect(replay2.id).toBe(replay1.id);
    await demo.query(`DELETE FROM ${PROVIDER_SCHEMA}.objects WHERE id = $1`, [replay1.id]);
  });

  it("each disagreement the provider plants, and an email the crash fault kept from being sent, is found once; demo:verify's comparison has no mismatch", async () => {
    const from = new Date(Date.now() - 1000);
    const steps = demoSteps(postgresShop(demo), NO_FAULTS, demoProviderClients(servers.endpoints));
    await pay(steps, order("p-dup", 1000), "duplicate");
    await pay(steps, order("p-lost", 700), "lost");
    await pay(steps, order("p-keyless", 600), "keyless");
    await pay(steps, order("p-drift", 900), "drift");
    await pay(steps, order("p-ok", 300, "globex"));

    // The receipt's crash fault: the worker notes the key and dies after the claim, before the send.
    const dying: Faults = {
      ...NO_FAULTS,
      crashBeforeSend: async (_where, record) => {
        await record();
        throw new Error("killed (the test stops here as SIGKILL would)");
      },
    };
    const crashing = demoSteps(postgresShop(demo), dying, demoProviderClients(servers.endpoints));
    const unsent = order("p-unsent", 400);
    const leased = createEffects({ db: demo, logger: pino({ level: "silent" }), flushInterval: 0, register: false, lease: 200 });
    await leased
      .job({ tenant: "acme", jobType: "order.receipt", messageId: unsent.msgId }, (job) => crashing.receipt(job, unsent))
      .catch(() => {});
    // A failed body would release the claim; a killed worker leaves it in progress: make it so.
    await demo.query(
      "UPDATE effects SET status = 'in_progress', lease_until = now() - interval '1 second', error = NULL WHERE key = 'receipt:p-unsent'",
    );
    await leased.close();
    // The redelivery finds the lease expired: at most once, so the receipt is abandoned, not sent.
    const redelivered = await effects.job({ tenant: "acme", jobType: "order.receipt", messageId: unsent.msgId }, (job) =>
      steps.receipt(job, unsent),
    );
    expect(redelivered.steps.map((s) => s.result)).toEqual(["abandoned"]);

    const window = { from, to: new Date(Date.now() + 1000) };
    const runs = await reconcileBoth(window);
    expect(runs.map((r) => r.status)).toEqual(["completed", "completed"]);
    expect(runs[0]!.counts).toEqual({
      duplicated_at_provider: 1,
      missing_at_provider: 2,
      unknown_to_onceboard: 1,
      drift: 1,
      pending: 0,
    });
    const { rows: mailerFindings } = await db.pool.query(
      "SELECT kind, detail FROM reconciliation_findings WHERE provider = 'mailer' ORDER BY detail",
    );
    expect(runs[1]!.counts, JSON.stringify(mailerFindings)).toMatchObject({ missing_at_provider: 1, unknown_to_onceboard: 0 });
    const { rows: never } = await db.pool.query(
      "SELECT effect_key, detail FROM reconciliation_findings WHERE provider = 'mailer' AND kind = 'missing_at_provider'",
    );
    expect(never).toEqual([
      {
        effect_key: "receipt:p-unsent",
        detail: "receipt:p-unsent was claimed and abandoned here, and no message carries it: never sent",
      },
    ]);

    const truth = await compareWithPlanted(
      demo,
      window,
      runs.map((r) => r.runId),
    );
    expect(truth.kinds.map((k) => [k.kind, k.planted, k.found])).toEqual([
      ["duplicated_at_provider", 1, 1],
      ["missing_at_provider", 3, 3],
      ["unknown_to_onceboard", 1, 1],
      ["drift", 1, 1],
    ]);
    expect(truth.mismatches).toBe(0);
    expect(formatTruth(truth, window).at(-1)).toMatch(
      /^reconciliation \S+ \(planted\/found\) duplicated_at_provider=1\/1 missing_at_provider=3\/3 unknown_to_onceboard=1\/1 drift=1\/1 planted_on_effects_in_progress=0 reconciliation_mismatches=0$/,
    );

    // The check can fail: a disagreement planted that the reconciler did not find is a mismatch.
    await demo.query(
      `INSERT INTO ${PROVIDER_SCHEMA}.injections (disagreement, object_id, onceboard_key, onceboard_tenant)
       VALUES ('drift', NULL, 'capture:p-ok', 'globex')`,
    );
    const wrong = await compareWithPlanted(
      demo,
      window,
      runs.map((r) => r.runId),
    );
    expect(wrong.mismatches).toBe(1);
    expect(wrong.kinds.find((k) => k.kind === "drift")?.missed).toEqual(["stripe:key:globex:capture:p-ok"]);
    await demo.query(`DELETE FROM ${PROVIDER_SCHEMA}.injections WHERE onceboard_key = 'capture:p-ok'`);
    await demo.query(`DELETE FROM ${PROVIDER_SCHEMA}.planted_keys WHERE onceboard_key = 'capture:p-ok'`);
  });

  it("a drifted or lost object, or an unsent receipt, whose effect is still in progress (the worker killed after the charge or before the send) is expected once the effect completes or is abandoned, not before: no mismatch whenever the run falls", async () => {
    // Not a second earlier: the previous test's disagreements stay out of this window.
    const from = new Date();
    // The capture's crash fault: the charge is made (the provider plants its disagreement), then the worker dies.
    const killedAfterCharge: Faults = {
      ...NO_FAULTS,
      crash: () => {
        throw new Error("killed (the test stops here as SIGKILL would)");
      },
    };
    const crashing = demoSteps(postgresShop(demo), killedAfterCharge, demoProviderClients(servers.endpoints));
    const steps = demoSteps(postgresShop(demo), NO_FAULTS, demoProviderClients(servers.endpoints));
    const drifted = order("ip-drift", 800, "umbra");
    const lost = order("ip-lost", 500, "umbra");
    await expect(pay(crashing, drifted, "drift")).rejects.toThrow(/killed/);
    await expect(pay(crashing, lost, "lost")).rejects.toThrow(/killed/);
    // The receipt's crash fault: the key noted as unsent, the worker dead before the send.
    const unsent = order("ip-unsent", 300, "umbra");
    const diesBeforeSend = demoSteps(
      postgresShop(demo),
      {
        ...NO_FAULTS,
        crashBeforeSend: async (_where, record) => {
          await record();
          throw new Error("killed (the test stops here as SIGKILL would)");
        },
      },
      demoProviderClients(servers.endpoints),
    );
    await expect(
      effects.job({ tenant: "umbra", jobType: "order.receipt", messageId: unsent.msgId }, (job) =>
        diesBeforeSend.receipt(job, unsent),
      ),
    ).rejects.toThrow(/killed/);
    // A failed body releases its claim; a killed worker leaves it in progress: make it so.
    await demo.query(
      "UPDATE effects SET status = 'in_progress', lease_until = now() + interval '1 hour', error = NULL WHERE tenant_id = 'umbra' AND key ~ '^(capture|receipt):ip-'",
    );
    const window = { from, to: new Date(Date.now() + 1000) };
    const during = await compareWithPlanted(
      demo,
      window,
      (await reconcileBoth(window)).map((r) => r.runId),
    );
    expect(during.mismatches, formatTruth(during, window).join("\n")).toBe(0);
    expect(during.inProgress).toBe(3);
    expect(formatTruth(during, window).at(-1)).toContain("planted_on_effects_in_progress=3 reconciliation_mismatches=0");

    // The takeover redoes the charge with the same key (the provider replays it) and completes, and
    // abandons the receipt (at most once): now all three are due.
    await demo.query(
      "UPDATE effects SET lease_until = now() - interval '1 second' WHERE tenant_id = 'umbra' AND key ~ '^(capture|receipt):ip-'",
    );
    await pay(steps, drifted);
    await pay(steps, lost);
    await effects.job({ tenant: "umbra", jobType: "order.receipt", messageId: unsent.msgId }, (job) =>
      steps.receipt(job, unsent),
    );
    const after = await compareWithPlanted(
      demo,
      window,
      (await reconcileBoth(window)).map((r) => r.runId),
    );
    expect(after.inProgress).toBe(0);
    expect(after.kinds.find((k) => k.kind === "drift")?.missed).toEqual([]);
    expect(after.kinds.find((k) => k.kind === "drift")?.planted).toBe(1);
    expect(after.kinds.find((k) => k.kind === "missing_at_provider")?.planted).toBe(2);
    expect(after.mismatches, formatTruth(after, window).join("\n")).toBe(0);
  });

  it("the mailer refuses bad input with a 400 naming the field, and the Stripe-compatible server plants one duplicate per injection on a repeated key, and one disagreement per key", async () => {
    const bad = await fetch(servers.mailer.url, { method: "POST", body: JSON.stringify({ subject: "x" }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "to is required", field: "to" });
    const badLimit = await fetch(`${servers.mailer.url}?limit=0`);
    expect(await badLimit.json()).toMatchObject({ field: "limit" });

    // The key was kept on the first request and "forgotten" on the retry: one more object, one injection.
    const { stripe } = demoProviderClients(servers.endpoints);
    const params = { amount: 10, currency: "usd", metadata: { onceboard_key: "capture:p-retry", onceboard_tenant: "initech" } };
    const firstCall = await stripe.paymentIntents.create(params, { idempotencyKey: "k-retry" });
    servers.stripe.faults = { ...noFaults(), rates: { ...noFaults().rates, duplicate: 1 } };
    const retried = await stripe.paymentIntents.create(params, { idempotencyKey: "k-retry" });
    servers.stripe.faults = noFaults();
    expect(retried.id).not.toBe(firstCall.id);
    const { rows } = await demo.query(
      `SELECT (SELECT count(*)::int FROM ${PROVIDER_SCHEMA}.objects WHERE metadata->>'onceboard_key' = 'capture:p-retry') AS objects,
              (SELECT count(*)::int FROM ${PROVIDER_SCHEMA}.injections WHERE onceboard_key = 'capture:p-retry') AS injections`,
    );
    expect(rows[0]).toEqual({ objects: 2, injections: 1 });

    // A key already planted gets no second disagreement on its retry: the lost object stays lost
    // (a "duplicate" drawn on the retry would prune the key and make the object after all, and the
    // reconciliation would find neither).
    const lostParams = { ...params, metadata: { ...params.metadata, onceboard_key: "capture:p-lost-retry" } };
    servers.stripe.faults = { ...noFaults(), rates: { ...noFaults().rates, lost: 1 } };
    await stripe.paymentIntents.create(lostParams, { idempotencyKey: "k-lost-retry" });
    servers.stripe.faults = { ...noFaults(), rates: { ...noFaults().rates, duplicate: 1 } };
    await stripe.paymentIntents.create(lostParams, { idempotencyKey: "k-lost-retry" });
    servers.stripe.faults = noFaults();
    const { rows: lost } = await demo.query(
      `SELECT (SELECT count(*)::int FROM ${PROVIDER_SCHEMA}.objects WHERE metadata->>'onceboard_key' = 'capture:p-lost-retry') AS objects,
              (SELECT array_agg(disagreement) FROM ${PROVIDER_SCHEMA}.injections WHERE onceboard_key = 'capture:p-lost-retry') AS injections`,
    );
    expect(lost[0]).toEqual({ objects: 0, injections: ["lost"] });
    // Not the demo's effects: out of the way of the next test's window.
    for (const key of ["capture:p-retry", "capture:p-lost-retry"]) {
      await demo.query(`DELETE FROM ${PROVIDER_SCHEMA}.objects WHERE metadata->>'onceboard_key' = $1`, [key]);
      await demo.query(`DELETE FROM ${PROVIDER_SCHEMA}.injections WHERE onceboard_key = $1`, [key]);
      await demo.query(`DELETE FROM ${PROVIDER_SCHEMA}.planted_keys WHERE onceboard_key = $1`, [key]);
    }
  });

  it("npm run demo:verify reconciles the live demo's window itself and ends with reconciliation_mismatches=0", async () => {
    // Every disagreement the tests above planted (the killed captures' drift and loss included, now completed).
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts", "demo-verify.ts"), "--grace", "0"], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: db.url },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      child.on("exit", (code) => resolve({ code, stdout, stderr }));
    });
    const last = run.stdout.trim().split("\n").at(-1);
    expect(last, run.stderr).toMatch(
      /^reconciliation \S+ \(planted\/found\) duplicated_at_provider=1\/1 missing_at_provider=5\/5 unknown_to_onceboard=1\/1 drift=2\/2 planted_on_effects_in_progress=0 reconciliation_mismatches=0$/,
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
  });
});
