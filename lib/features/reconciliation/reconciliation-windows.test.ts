import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { runsQuery } from "./contract";
import { getFinding } from "./get-finding";
import { listFindings } from "./list-findings";
import { listReconciliationRuns } from "./list-reconciliation-runs";
import { listReconciliationWindows } from "./list-reconciliation-windows";
import { RECON_LOAD, RECON_SEED, seedReconciliation, seedReconciliationLoad } from "./testing/seed-reconciliation";

const NOW = new Date();
const acme = Scope.ofPrincipal({ tenantId: "acme" });
const platform = Scope.ofPrincipal({ tenantId: null });
const minutesAgo = (n: number) => new Date(NOW.getTime() - n * 60_000).toISOString();

/**
 * The Reconciliation page's runs, grouped by window: a window the scheduler reran eight times is
 * one window (its latest run, and how many it had), and its reruns are one read away, newest first.
 */
describe("reconciliation windows", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await seedReconciliation(db.pool, NOW);
    await seedReconciliationLoad(db.pool, NOW);
    // Two runs of one mailer window that started in the same instant: the id decides which is latest.
    await db.pool.query(
      `INSERT INTO reconciliation_runs (provider, window_from, window_to, grace_seconds, status, trigger, started_at, finished_at)
       SELECT 'mailer', $1, $2, 300, 'completed', 'schedule', $3, $3 FROM generate_series(1, 2)`,
      [minutesAgo(120), minutesAgo(60), minutesAgo(50)],
    );
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("lists each window once, by its latest run, newest first, with its count of runs", async () => {
    const { windows, nextCursor } = await listReconciliationWindows(platform, { limit: 20, now: NOW }, db.pool);
    expect(nextCursor).toBeNull();
    expect(windows.map((w) => [w.provider, w.windowFrom, w.windowTo, w.runCount, w.latest.status])).toEqual([
      ["stripe", minutesAgo(10), NOW.toISOString(), 1, "running"],
      ["stripe", minutesAgo(24 * 60), minutesAgo(10), RECON_LOAD.reruns + 1, "completed"],
      ["mailer", minutesAgo(24 * 60), minutesAgo(10), 1, "failed"],
      ["mailer", minutesAgo(120), minutesAgo(60), 2, "completed"],
    ]);
    // The latest of the rerun window is the seed's run that started 6 minutes ago, not an earlier rerun.
    expect(windows[1]?.latest.startedAt).toBe(minutesAgo(6));
    const tied = await db.pool.query<{ id: string }>(
      "SELECT max(id)::text AS id FROM reconciliation_runs WHERE provider = 'mailer' AND window_from = $1",
      [minutesAgo(120)],
    );
    expect(windows[3]?.latest.id).toBe(tied.rows[0]?.id);
  });

  it("pages windows by keyset: every window once, in the same order", async () => {
    const all = await listReconciliationWindows(platform, { limit: 20, now: NOW }, db.pool);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listReconciliationWindows(platform, { limit: 1, cursor, now: NOW }, db.pool);
      seen.push(...page.windows.map((w) => w.latest.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(all.windows.map((w) => w.latest.id));
    // A runs cursor is not a windows cursor.
    const runs = await listReconciliationRuns(platform, { limit: 1, now: NOW }, db.pool);
    await expect(
      listReconciliationWindows(platform, { limit: 1, cursor: runs.nextCursor ?? "", now: NOW }, db.pool),
    ).rejects.toThrow(/cursor/);
  });

  it("a tenant sees the windows and the latest run's status, not the tallies that span tenants", async () => {
    const { windows } = await listReconciliationWindows(acme, { limit: 20, now: NOW }, db.pool);
    expect(windows).toHaveLength(4);
    for (const { latest } of windows) expect([latest.objectsSeen, latest.counts, latest.requestedBy]).toEqual([null, null, null]);
    expect(windows[2]?.latest.error).toBe("the run failed");
  });

  it("a window's runs, newest first, are what its count says; one bound alone is refused", async () => {
    const [, rerun] = (await listReconciliationWindows(platform, { limit: 20, now: NOW }, db.pool)).windows;
    if (!rerun) throw new Error("no rerun window");
    const query = runsQuery.parse({ provider: rerun.provider, windowFrom: rerun.windowFrom, windowTo: rerun.windowTo });
    const { runs } = await listReconciliationRuns(platform, { ...query, now: NOW }, db.pool);
    expect(runs).toHaveLength(rerun.runCount);
    expect(runs[0]?.id).toBe(rerun.latest.id);
    expect(runs.every((r) => r.windowFrom === rerun.windowFrom && r.windowTo === rerun.windowTo)).toBe(true);
    const started = runs.map((r) => r.startedAt);
    expect(started).toEqual([...started].sort().reverse());
    expect(runsQuery.safeParse({ windowFrom: rerun.windowFrom }).error?.issues.map((i) => [i.path.join("."), i.message])).toEqual(
      [["windowTo", "windowFrom and windowTo name one window: give both or neither"]],
    );
    expect(runsQuery.safeParse({ windowFrom: rerun.windowTo, windowTo: rerun.windowFrom }).success).toBe(false);
  });

  it("a finding's detail links each provider object to the provider's page, and says what the outcome recorded", async () => {
    const [drift] = (await listFindings(platform, { tenant: RECON_LOAD.tenant, state: "open", limit: 1 }, db.pool)).findings;
    if (!drift) throw new Error("no drift");
    const detail = await getFinding(platform, drift.id, db.pool, (provider, id) =>
      provider === RECON_SEED.provider ? `https://pay.example/p/${encodeURIComponent(id)}` : null,
    );
    expect(detail?.ours?.recorded).toEqual({
      objectId: RECON_LOAD.driftObject(1),
      amount: RECON_LOAD.recordedAmount(1),
      currency: "usd",
      status: "succeeded",
    });
    expect(detail?.theirs).toEqual([
      expect.objectContaining({
        id: RECON_LOAD.driftObject(1),
        url: `https://pay.example/p/${RECON_LOAD.driftObject(1)}`,
        amount: RECON_LOAD.providerAmount(1),
      }),
    ]);
    const unlinked = await getFinding(platform, drift.id, db.pool, () => null);
    expect(unlinked?.theirs[0]?.url).toBeNull();
  });
});
