import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { ensureEffectPartitions } from "../../db/partitions";
import { demoProvidersFile, writeDemoProvidersFile } from "../../demo/providers-file";
import { parseProviders } from "../../reconciliation/providers";
import {
  RECONCILED_EFFECTS as R,
  RECON_SEED,
  seedReconciledEffects,
  seedReconciliation,
} from "../reconciliation/testing/seed-reconciliation";
import { getEffect } from "./get-effect";
import { getProviderSide } from "./provider-side";

/**
 * The key's verdict from the provider's side, through getEffect as the Keys page reads it: a key a
 * run covered and found nothing about names the object its outcome recorded; a duplicate at the
 * provider is red with both objects; a key no run covered yet, or of a job type no provider holds,
 * has no provider side.
 */
const NOW = new Date();
const acme = Scope.ofPrincipal({ tenantId: "acme" });

describe("the key's verdict from the provider's side", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { now: NOW, back: 2, ahead: 1 });
    await seedReconciliation(db.pool, NOW);
    await seedReconciledEffects(db.pool, NOW);
    // The Keys page reads the console's providers file, as configured for the demo.
    process.env.ONCEBOARD_PROVIDERS_FILE = writeDemoProvidersFile(fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-side-")), {
      mailerUrl: "http://m",
    });
  });
  afterAll(async () => {
    await db?.drop();
  });

  const side = async (key: string) => (await getEffect(acme, { key, now: NOW }, db.pool))?.providerSide;

  it("a covered key with no finding: one payment at Stripe, the recorded id, reconciled 4 min ago", async () => {
    expect(await side(R.cleanKey)).toMatchObject({
      provider: "stripe",
      text: "ran once here · 1 payment at Stripe (pi_acme_ok) · reconciled 4 min ago",
      tone: "ok",
      objectIds: ["pi_acme_ok"],
      findingIds: [],
    });
  });

  it("a duplicate at the provider: both payments, in red, with the finding", async () => {
    const dup = await side(RECON_SEED.duplicateKey("acme"));
    expect(dup).toMatchObject({
      text: "ran once here · 2 payments at Stripe · reconciled 4 min ago",
      tone: "danger",
      objectIds: RECON_SEED.duplicateObjects("acme"),
    });
    expect(dup?.findingIds).toHaveLength(1);
    expect((await side(RECON_SEED.missingKey("acme")))?.text).toBe("ran once here · no payment at Stripe · reconciled 4 min ago");
  });

  it("an abandoned receipt the mailer never received reads never sent", async () => {
    const { rows } = await db.pool.query<{ id: number }>("SELECT id FROM reconciliation_runs ORDER BY id LIMIT 1");
    await db.pool.query(
      `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, job_type, effect_key, provider_object_ids, ours, theirs, detail, first_run_id, last_run_id)
       VALUES ('mailer:key:acme:receipt:never', 'mailer', 'missing_at_provider', 'acme', 'order.receipt', 'receipt:never', '{}', '{}', '[]',
               'receipt:never was claimed and abandoned here, and no message carries it: never sent', $1, $1)`,
      [rows[0]!.id],
    );
    const verdict = await getProviderSide(
      db.pool,
      {
        tenant: "acme",
        key: "receipt:never",
        jobType: "order.receipt",
        status: "abandoned",
        attempts: 1,
        createdAt: NOW,
        outcome: null,
      },
      {
        now: NOW,
        providers: parseProviders(demoProvidersFile({ mailerUrl: "http://m" }), "demo", { STRIPE_API_KEY: "sk" }),
      },
    );
    expect(verdict).toMatchObject({ provider: "mailer", tone: "danger" });
    expect(verdict?.text).toMatch(/^abandoned here · never sent: no message at Mailer/);
  });

  it("a resolved finding no longer colours the verdict", async () => {
    await db.pool.query("UPDATE reconciliation_findings SET state = 'resolved' WHERE effect_key = $1", [
      RECON_SEED.missingKey("acme"),
    ]);
    expect((await side(RECON_SEED.missingKey("acme")))?.tone).toBe("ok");
  });

  it("no provider side for a key no run covered, nor for a job type no provider holds", async () => {
    expect(await side(R.uncoveredKey)).toBeNull();
    expect(await side(R.unmappedKey)).toBeNull();
  });
});
