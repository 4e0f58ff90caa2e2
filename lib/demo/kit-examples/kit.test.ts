import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import {
  assertIdempotent,
  checkIdempotent,
  formatReport,
  IdempotencyCheckError,
  type IdempotencyReport,
} from "../../idempotency/testing";
import {
  type DemoProviderServers,
  demoProviderClients,
  installDemoProviderSchema,
  newDemoApiKey,
  startDemoProviderServers,
} from "../provider";
import {
  checkThenAct,
  closeKitProviders,
  demoPipeline,
  keyedOnMessageId,
  orderCheck,
  orderMessage,
  sharedKey,
} from "./order-handlers";

let db: TestDatabase;
// For the test whose handler calls the provider itself (no key); the examples find their own.
let servers: DemoProviderServers;

beforeAll(async () => {
  db = await createTestDatabase();
  await installDemoProviderSchema(db.pool);
  servers = await startDemoProviderServers({ databaseUrl: db.sqlUrl, apiKey: newDemoApiKey() });
});
afterAll(async () => {
  await closeKitProviders();
  await servers?.close();
  await db?.drop();
});

const scenario = (report: IdempotencyReport, name: string) => {
  const s = report.scenarios.find((x) => x.name === name);
  if (!s) throw new Error(`no scenario ${name} in:\n${formatReport(report, { all: true })}`);
  return s;
};

async function leftoverEffects(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM effects");
  return rows[0]!.n;
}

describe("checkIdempotent on the demo pipeline (capture → mark paid → receipt)", () => {
  it("passes every scenario, and explains the crash scenarios", async () => {
    const m = orderMessage("kit-demo-1");
    const report = await assertIdempotent(orderCheck(db.sqlUrl, m, demoPipeline));

    expect(report.ok).toBe(true);
    expect(report.steps).toEqual([
      { step: "capture:kit-demo-1", policy: "external" },
      { step: "mark-paid:kit-demo-1", policy: "transactional" },
      { step: "receipt:kit-demo-1", policy: "atMostOnce" },
    ]);
    expect(report.reference).toMatchObject({
      order: [{ status: "paid", paid: true, charge_at_provider: true }],
      captures: [{ kind: "capture", amount_cents: 1299 }],
      receipts: [{}],
    });
    // once, twice, concurrent, republished, and 3 boundaries × 3 steps.
    expect(report.scenarios.map((s) => s.name)).toEqual([
      "once",
      "twice",
      "concurrent",
      "republished",
      ...["capture", "mark-paid", "receipt"].flatMap((step) =>
        ["claimed", "ran", "done"].map((at) => `crash at ${step}:kit-demo-1 (${at})`),
      ),
    ]);
    const concurrent = scenario(report, "concurrent");
    expect(concurrent.equal).toBe(true);
    expect(concurrent.steps.map((s) => [s.step, s.executions])).toEqual([
      ["capture:kit-demo-1", 1],
      ["mark-paid:kit-demo-1", 1],
      ["receipt:kit-demo-1", 1],
    ]);
    expect(concurrent.steps[0]!.results.duplicate).toBe(4);

    // Died after charging, before the claim completed: the redelivery calls the provider again
    // with the same key; the provider deduplicates, so the state matches.
    const afterCharge = scenario(report, "crash at capture:kit-demo-1 (ran)");
    expect(afterCharge).toMatchObject({ ok: true, equal: true, repeated: [] });
    expect(afterCharge.steps[0]).toMatchObject({ executions: 2, reference: 1 });
    // Died inside mark-paid's transaction: rolled back with the claim, done again once.
    expect(scenario(report, "crash at mark-paid:kit-demo-1 (ran)")).toMatchObject({ ok: true, equal: true });
    // Died after claiming the receipt, before sending: abandoned, never sent (the at-most-once trade).
    const receipt = scenario(report, "crash at receipt:kit-demo-1 (claimed)");
    expect(receipt).toMatchObject({
      ok: true,
      equal: false,
      diff: [expect.stringMatching(/^receipts: 1 item → 0 items; removed \{"recipient":/)],
    });
    expect(receipt.abandoned).toEqual([expect.stringContaining("receipt:kit-demo-1: abandoned")]);
    // Sent, then died: abandoned on the retry, but sent exactly once.
    expect(scenario(report, "crash at receipt:kit-demo-1 (ran)")).toMatchObject({ ok: true, equal: true });
    expect(scenario(report, "crash at receipt:kit-demo-1 (ran)").abandoned).toHaveLength(1);

    // The kit leaves no effect rows behind.
    expect(await leftoverEffects()).toBe(0);
  });

  it("strictAtMostOnce turns the abandoned receipt into a failure", async () => {
    const m = orderMessage("kit-demo-strict");
    const report = await checkIdempotent({
      ...orderCheck(db.sqlUrl, m, demoPipeline),
      scenarios: ["crash"],
      strictAtMostOnce: true,
    });
    expect(report.scenarios.filter((s) => !s.ok).map((s) => s.name)).toEqual(["crash at receipt:kit-demo-strict (claimed)"]);
  });
});

describe("checkIdempotent flags broken handlers", () => {
  it("a check-then-act handler: fine twice in a row, charges again when deliveries run at once", async () => {
    const m = orderMessage("kit-naive-1");
    const error = await assertIdempotent(orderCheck(db.sqlUrl, m, checkThenAct)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IdempotencyCheckError);
    expect(error).toBeInstanceOf(Error);
    const report = (error as IdempotencyCheckError).report;

    expect(scenario(report, "twice").ok).toBe(true);
    const concurrent = scenario(report, "concurrent");
    expect(concurrent.ok).toBe(false);
    expect(
      concurrent.diff.some((line) =>
        /^captures: 1 item → [2-5] items; added [2-4]?×? ?\{"kind":"capture","amount_cents":1299\}$/.test(line),
      ),
    ).toBe(true);
    expect(concurrent.diff.some((line) => /^receipts: 1 item → [2-5] items; added /.test(line))).toBe(true);
    // No library steps: no crash scenario, and the report says why.
    expect(report.scenarios.some((s) => s.kind === "crash")).toBe(false);
    expect(report.warnings.join("\n")).toMatch(/no step through ctx.effects/);
    // The thrown message is the readable report.
    const message = (error as Error).message;
    expect(message).toMatch(/^not idempotent: 1 of 4 scenarios differ/);
    expect(message).toContain("✗ concurrent: the same message delivered 5 times at once");
    expect(message).toMatch(/ {6}captures: 1 item → \d items; added /);
    expect(await leftoverEffects()).toBe(0);
  });

  it("a handler keyed on the message id: re-published under a new id, it charges and mails again", async () => {
    const m = orderMessage("kit-msgid-1");
    const report = await checkIdempotent(orderCheck(db.sqlUrl, m, keyedOnMessageId));
    expect(report.ok).toBe(false);
    expect(report.steps.map((s) => s.step)).toEqual(["capture:{messageId}", "mark-paid:{messageId}", "receipt:{messageId}"]);
    expect(report.warnings.join("\n")).toMatch(
      /capture:\{messageId\}, mark-paid:\{messageId\}, receipt:\{messageId\} are keyed on the broker's message id/,
    );

    const republished = scenario(report, "republished");
    expect(republished.ok).toBe(false);
    expect(republished.diff).toEqual([
      'captures: 1 item → 2 items; added {"kind":"capture","amount_cents":1299}',
      'receipts: 1 item → 2 items; added {"recipient":"billing+kit-msgid-1@acme.example","subject":"Receipt"}',
    ]);
    expect(republished.repeated).toEqual([
      "capture:{messageId}: ran 2× (reference 1×)",
      "mark-paid:{messageId}: ran 2× (reference 1×)",
      "receipt:{messageId}: ran 2× (reference 1×)",
    ]);
    // Redelivered with the same id it looks fine: only the re-publish catches it.
    expect(scenario(report, "twice").ok).toBe(true);
    expect(scenario(report, "concurrent").ok).toBe(true);
    expect(formatReport(report)).toContain("    repeated: capture:{messageId}: ran 2× (reference 1×)");
  });

  it("a handler whose two effects share one key: the second never runs, even on the first delivery", async () => {
    const m = orderMessage("kit-shared-1");
    const report = await checkIdempotent({ ...orderCheck(db.sqlUrl, m, sharedKey), scenarios: ["twice"] });
    expect(report.ok).toBe(false);
    const once = scenario(report, "once");
    expect(once.ok).toBe(false);
    expect(once.missing).toEqual([
      expect.stringMatching(/^order:kit-shared-1 #2: never ran — it shares the key order:kit-shared-1/),
    ]);
    expect(report.reference).toMatchObject({ captures: [{ kind: "capture" }], receipts: [] });
    expect(formatReport(report)).toContain("✗ once: one delivery: the reference state");
  });

  it("an external step that does not pass its provider key: only a crash after the charge shows the second charge", async () => {
    const m = orderMessage("kit-nokey-1");
    const report = await checkIdempotent({
      ...orderCheck(db.sqlUrl, m, async (msg, { effects, delivery }) => {
        await effects.job({ tenant: msg.tenant, jobType: "order.paid", ...delivery }, async (job) => {
          // Claimed, but the provider is called without claim.providerKey: the redo after a crash
          // is a new charge to the provider.
          const charge = await job.external(`capture:${msg.orderId}`, async () => {
            const intent = await demoProviderClients(servers.endpoints).stripe.paymentIntents.create({
              amount: msg.amountCents,
              currency: "usd",
              metadata: { order_id: msg.orderId },
            });
            return { chargeId: intent.id };
          });
          await job.transaction(`mark-paid:${msg.orderId}`, (tx) =>
            tx.query(
              "UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = now() WHERE tenant_id = $1 AND order_id = $2",
              [msg.tenant, msg.orderId, charge.chargeId],
            ),
          );
        });
      }),
    });
    expect(report.scenarios.filter((s) => !s.ok).map((s) => s.name)).toEqual(["crash at capture:kit-nokey-1 (ran)"]);
    const crash = scenario(report, "crash at capture:kit-nokey-1 (ran)");
    expect(crash.crash).toEqual({ step: "capture:kit-nokey-1", at: "ran", policy: "external" });
    expect(crash.diff).toContain('captures: 1 item → 2 items; added {"kind":"capture","amount_cents":1299}');
    expect(crash.notes).toEqual([
      expect.stringMatching(
        /attempt 1: crashed at capture:kit-nokey-1, after its body returned, before the claim was completed; redelivered$/,
      ),
    ]);
  });
});
