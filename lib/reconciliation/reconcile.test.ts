import { spawn } from "node:child_process";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import Stripe from "stripe";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { idleErrorListeners, oneConnectionPool } from "../../test/database";
import { consolePoolConfig } from "../db/pool";
import { noFaults } from "../demo/stripe-server";
import { seedProviderObjects } from "../demo/stripe-storage";
import { DEFAULT_SCHEMA } from "../idempotency";
import type { ProviderAdapter, ProviderObject } from "./adapter";
import { ReconcileBusyError, reconcile, summaryLine } from "./reconcile";
import { StripeAdapter } from "./stripe";
import { type Harness, startHarness, TEST_STRIPE_KEY } from "./testing/harness";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

async function findings() {
  const { rows } = await h.db.pool.query<{
    kind: string;
    effect_key: string | null;
    identity: string;
    detail: string;
    n: number;
  }>(
    "SELECT kind, effect_key, identity, detail, cardinality(provider_object_ids) AS n FROM reconciliation_findings ORDER BY kind, effect_key NULLS LAST",
  );
  return rows;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe("reconciling Onceboard's effects with the demo's Stripe-compatible server, through the stripe client", () => {
  it("finds nothing in a clean window and counts the matched pairs", async () => {
    await h.capture("acme", "o-1", 1200);
    await h.capture("acme", "o-2", 800);
    await h.capture("globex", "o-1", 500, { retryAfterCharge: true });
    const result = await h.run();
    expect(result).toMatchObject({ status: "completed", matched: 3, effectsSeen: 3, objectsSeen: 3 });
    expect(await findings()).toEqual([]);
    expect(summaryLine(result)).toBe(
      "reconcile matched=3 duplicated_at_provider=0 missing_at_provider=0 unknown_to_onceboard=0 drift=0 pending=0",
    );
    const coverage = await h.db.pool.query("SELECT run_id FROM reconciliation_coverage WHERE provider = 'stripe'");
    expect(coverage.rows).toEqual([{ run_id: result.runId }]);
  });

  it("finds each planted disagreement exactly once, and a rerun adds none", async () => {
    await h.capture("acme", "clean", 100);
    // Duplicate: the provider carried the one request out twice (a second PaymentIntent for the key).
    h.server.faults = { ...noFaults(), rates: { ...noFaults().rates, duplicate: 1 } };
    await h.capture("acme", "dup", 1000);
    // Lost: accepted, never kept.
    h.server.faults = { ...noFaults(), rates: { ...noFaults().rates, lost: 1 } };
    await h.capture("acme", "lost", 700);
    // Drift: kept with another amount than the one asked for.
    h.server.faults = { ...noFaults(), rates: { ...noFaults().rates, drift: 1 } };
    await h.capture("acme", "drift", 900);
    h.server.faults = noFaults();
    // A legacy path: charges without a claim, one with an unknown key, one with none.
    await seedProviderObjects(h.server.pool, [
      {
        id: "pi_legacy_unknown",
        amount: 50,
        created: nowSeconds(),
        metadata: { onceboard_key: "capture:ghost", onceboard_tenant: "acme" },
      },
      { id: "pi_legacy_keyless", amount: 60, created: nowSeconds() },
    ]);

    const first = await h.run();
    expect(first.status).toBe("completed");
    expect(first.counts).toEqual({
      duplicated_at_provider: 1,
      missing_at_provider: 1,
      unknown_to_onceboard: 2,
      drift: 1,
      pending: 0,
    });
    expect(first.matched).toBe(1);
    const rows = await findings();
    expect(rows.map((r) => [r.kind, r.effect_key])).toEqual([
      ["drift", "capture:drift"],
      ["duplicated_at_provider", "capture:dup"],
      ["missing_at_provider", "capture:lost"],
      ["unknown_to_onceboard", "capture:ghost"],
      ["unknown_to_onceboard", null],
    ]);
    expect(rows.find((r) => r.kind === "duplicated_at_provider")).toMatchObject({
      n: 2,
      detail: "2 PaymentIntents carry capture:dup",
    });
    expect(rows.find((r) => r.kind === "drift")?.detail).toBe("capture:drift: amount 900 here, 901 at the provider");

    const second = await h.run();
    expect(second.counts).toEqual(first.counts);
    expect(await findings()).toEqual(rows);
    const { rows: runs } = await h.db.pool.query("SELECT count(*)::int AS n FROM reconciliation_runs WHERE status = 'completed'");
    expect(runs[0].n).toBe(2);
  });

  it("calls an absence inside the grace period pending, and the same finding missing once past it", async () => {
    h.server.faults = { ...noFaults(), rates: { ...noFaults().rates, lost: 1 } };
    await h.capture("acme", "late", 300);
    h.server.faults = noFaults();
    const inside = await h.run({ graceSeconds: 3600 });
    expect(inside.counts.pending).toBe(1);
    expect(inside.counts.missing_at_provider).toBe(0);
    const past = await h.run({ graceSeconds: 0 });
    expect(past.counts.missing_at_provider).toBe(1);
    expect((await findings()).map((r) => r.kind)).toEqual(["missing_at_provider"]);
  });

  it("waits as long as a 429's Retry-After asks, then completes", async () => {
    await h.capture("acme", "o-1", 100);
    h.server.faults = { ...noFaults(), rateLimitNext: { count: 1, retryAfterSeconds: 1 } };
    const sleeps: number[] = [];
    const result = await h.run({ sleeps });
    expect(result.status).toBe("completed");
    expect(result.matched).toBe(1);
    expect(sleeps).toEqual([1000]);
  });

  it("retries a 5xx with backoff and completes", async () => {
    await h.capture("acme", "o-1", 100);
    h.server.faults = { ...noFaults(), serverErrorNext: { count: 2, status: 503 } };
    const sleeps: number[] = [];
    const result = await h.run({ sleeps });
    expect(result).toMatchObject({ status: "completed", matched: 1 });
    expect(sleeps).toHaveLength(2);
  });

  it("fails the run, never matched, when the 5xx outlasts the retry budget", async () => {
    await h.capture("acme", "o-1", 100);
    h.server.faults = { ...noFaults(), serverErrorNext: { count: 100, status: 500 } };
    const result = await h.run();
    expect(result.status).toBe("failed");
    expect(result.error).toMatch(/gave up after 4 attempts; last answer: 500/);
    const { rows } = await h.db.pool.query("SELECT status, error, matched FROM reconciliation_runs WHERE id = $1", [
      result.runId,
    ]);
    expect(rows[0]).toMatchObject({ status: "failed", matched: 0 });
    expect(rows[0].error).toBe(result.error);
    expect(await h.db.pool.query("SELECT 1 FROM reconciliation_coverage")).toHaveProperty("rowCount", 0);
  });

  it("fails the run on malformed JSON", async () => {
    await h.capture("acme", "o-1", 100);
    h.server.faults = { ...noFaults(), malformedNext: 1 };
    const result = await h.run();
    expect(result.status).toBe("failed");
    expect(result.error).toMatch(/malformed JSON/);
  });

  it("fails the run when the API key is refused", async () => {
    const wrong = new Stripe("sk_test_wrong", { host: "127.0.0.1", port: h.server.port, protocol: "http", maxNetworkRetries: 0 });
    const result = await h.run({ stripe: wrong });
    expect(result.status).toBe("failed");
    expect(result.error).toMatch(/^Stripe refused the API key \(401\)/);
    expect(TEST_STRIPE_KEY).not.toBe("sk_test_wrong");
  });

  it("refuses a second run of a window while the first holds it, and lets the first finish", async () => {
    await h.capture("acme", "o-1", 100);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const provider = h.provider;
    const real = new StripeAdapter(h.stripe);
    // The first run stops inside its first page, holding the window's lock on its own connection.
    const blocking: ProviderAdapter = {
      provider: "stripe",
      async listPage(window, cursor) {
        entered();
        await held;
        return real.listPage(window, cursor);
      },
    };
    const options = { pool: h.db.pool, provider, window: h.window, graceSeconds: 0, trigger: "manual" as const };
    const first = reconcile({ ...options, adapter: blocking });
    await inside;
    await expect(reconcile({ ...options, adapter: real })).rejects.toBeInstanceOf(ReconcileBusyError);
    release();
    expect(await first).toMatchObject({ status: "completed", matched: 1 });
    const { rows } = await h.db.pool.query("SELECT count(*)::int AS n FROM reconciliation_runs");
    expect(rows[0].n).toBe(1);
  });
});

describe("a run whose connection the server cuts while it reads the provider", () => {
  it("fails to its caller without an uncaught exception, and the next run takes the window up and completes it", async () => {
    await h.capture("acme", "o-1", 100);
    const pool = new pg.Pool(
      consolePoolConfig({
        connectionString: h.db.url,
        schema: DEFAULT_SCHEMA,
        statementTimeoutMs: null,
        max: 2,
        application_name: "onceboard-reconcile-cut",
      }),
    );
    pool.on("error", () => {});
    // Before the fix the run's checked-out connection had no listener: the FATAL was an 'error'
    // event that killed the console. Recorded here so the test fails, not only the run.
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    try {
      const real = new StripeAdapter(h.stripe);
      let cut = false;
      const cutting: ProviderAdapter = {
        provider: "stripe",
        async listPage(window, cursor) {
          if (!cut) {
            cut = true;
            const { rows } = await h.db.pool.query<{ n: number }>(
              "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'onceboard-reconcile-cut'",
            );
            expect(rows[0]?.n).toBeGreaterThan(0);
            await sleep(200); // the FATAL arrives while no query of the run is in flight
          }
          return real.listPage(window, cursor);
        },
      };
      const options = { pool, provider: h.provider, window: h.window, graceSeconds: 0, trigger: "manual" as const };
      await expect(reconcile({ ...options, adapter: cutting })).rejects.toThrow(/connection|terminat/i);
      expect(uncaught).toEqual([]);
      const again = await reconcile({ ...options, adapter: real });
      expect(again).toMatchObject({ status: "completed", matched: 1, resumed: true });
    } finally {
      process.off("uncaughtException", onUncaught);
      await pool.end();
    }
  });
});

describe("a run's connection", () => {
  it("goes back to the pool with no listener of the run's left on it", async () => {
    await h.capture("acme", "o-1", 100);
    // One connection, so every run takes the same one.
    const pool = oneConnectionPool(h.db.url, "reconcile-listeners");
    try {
      const before = await idleErrorListeners(pool);
      const options = { pool, adapter: new StripeAdapter(h.stripe), provider: h.provider, window: h.window, graceSeconds: 0 };
      for (let run = 0; run < 3; run++) await reconcile({ ...options, trigger: "manual" });
      expect(await idleErrorListeners(pool)).toBe(before);
    } finally {
      await pool.end();
    }
  });
});

describe("a run's start", () => {
  it("tells its caller the run's id once its row is running, before the provider is read", async () => {
    await h.capture("acme", "o-1", 100);
    const real = new StripeAdapter(h.stripe);
    const seen: string[] = [];
    let startedId: number | null = null;
    const adapter: ProviderAdapter = {
      provider: "stripe",
      listPage(window, cursor) {
        seen.push("page");
        return real.listPage(window, cursor);
      },
    };
    const result = await reconcile({
      pool: h.db.pool,
      adapter,
      provider: h.provider,
      window: h.window,
      graceSeconds: 0,
      trigger: "api",
      onStarted: ({ runId, resumed }) => {
        seen.push("started");
        startedId = runId;
        expect(resumed).toBe(false);
      },
    });
    expect(seen[0]).toBe("started");
    expect(startedId).toBe(result.runId);
    const { rows } = await h.db.pool.query("SELECT status FROM reconciliation_runs WHERE id = $1", [startedId]);
    expect(rows).toEqual([{ status: "completed" }]);
  });
});

describe("a provider that lists one object twice", () => {
  it("counts it once and calls nothing a duplicate (an offset-paged list shifting under an insert)", async () => {
    await h.capture("acme", "o-1", 100);
    await h.capture("acme", "o-2", 200);
    await h.capture("acme", "o-3", 300);
    const provider = h.provider;
    const real = new StripeAdapter(h.stripe, undefined, 1);
    // Each page after the first starts with the previous page's object again.
    let previous: ProviderObject | null = null;
    const shifting: ProviderAdapter = {
      provider: "stripe",
      async listPage(window, cursor) {
        const page = await real.listPage(window, cursor);
        const objects = previous && page.objects.length > 0 ? [previous, ...page.objects] : page.objects;
        previous = page.objects.at(-1) ?? previous;
        return { ...page, objects };
      },
    };
    const result = await reconcile({
      pool: h.db.pool,
      adapter: shifting,
      provider,
      window: h.window,
      graceSeconds: 0,
      trigger: "manual",
      stageBatch: { objects: 1, ms: 0 },
    });
    expect(result).toMatchObject({ status: "completed", matched: 3, effectsSeen: 3, objectsSeen: 3 });
    expect(await findings()).toEqual([]);
  });
});

describe("a run in another process, killed mid-way", () => {
  it("resumes from its checkpoint to the same findings, counting no object twice", async () => {
    await h.capture("acme", "paid", 100);
    const created = nowSeconds();
    const objects = Array.from({ length: 1000 }, (_, i) => ({
      id: `pi_unknown_${String(i).padStart(4, "0")}`,
      amount: 10,
      created,
      metadata: { onceboard_key: `capture:ghost-${i}`, onceboard_tenant: "acme" },
    }));
    await seedProviderObjects(h.server.pool, objects);
    const child = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      const proc = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          path.join(import.meta.dirname, "testing/kill-mid-run.ts"),
          h.db.url,
          String(h.server.port),
          h.window.from.toISOString(),
          h.window.to.toISOString(),
          "4",
        ],
        { stdio: ["ignore", "ignore", "inherit"] },
      );
      proc.on("exit", (code, signal) => resolve({ code, signal }));
    });
    expect(child.signal).toBe("SIGKILL");
    const { rows: left } = await h.db.pool.query("SELECT status, objects_seen, checkpoint FROM reconciliation_runs");
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ status: "running", objects_seen: 400 });

    // The killed process's session (and the window's lock it held) ends when PostgreSQL reads the
    // closed socket, which on a loaded machine can come after the child's exit reached us.
    for (let tries = 0; ; tries++) {
      const { rows: sessions } = await h.db.pool.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'kill-mid-run' AND datname = current_database()",
      );
      if (sessions[0].n === 0) break;
      if (tries > 200) throw new Error("the killed run's database session did not end");
      await sleep(50);
    }
    const resumed = await h.run({ pageLimit: 100 });
    expect(resumed).toMatchObject({ status: "completed", resumed: true, objectsSeen: 1001, matched: 1 });
    expect(resumed.counts.unknown_to_onceboard).toBe(1000);
    const { rows } = await h.db.pool.query(
      "SELECT count(*)::int AS n, count(DISTINCT identity)::int AS d FROM reconciliation_findings",
    );
    expect(rows[0]).toEqual({ n: 1000, d: 1000 });
    const { rows: runs } = await h.db.pool.query("SELECT count(*)::int AS n FROM reconciliation_runs");
    expect(runs[0].n).toBe(1);
  });
});

describe("a window of 100,000 provider objects", () => {
  it("pages through all of them and matches each to its effect", async () => {
    const total = 100_000;
    const created = nowSeconds();
    // The effects a worker would have written, bulk-inserted as the harness may (the library writes them in production).
    await h.db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, outcome, created_at, completed_at)
       SELECT 'acme', 'capture:bulk-' || i, 'order.capture', 'completed', 'external',
              jsonb_build_object('provider_object_id', 'pi_bulk_' || i, 'amount', 100, 'currency', 'usd', 'status', 'succeeded'),
              now(), now()
         FROM generate_series(1, $1) AS i`,
      [total],
    );
    await seedProviderObjects(
      h.server.pool,
      Array.from({ length: total }, (_, n) => ({
        id: `pi_bulk_${n + 1}`,
        amount: 100,
        created,
        metadata: { onceboard_key: `capture:bulk-${n + 1}`, onceboard_tenant: "acme" },
      })),
    );
    const result = await h.run({ pageLimit: 100 });
    expect(result).toMatchObject({ status: "completed", matched: total, effectsSeen: total, objectsSeen: total });
    expect(await findings()).toEqual([]);
  }, 300_000);
});
