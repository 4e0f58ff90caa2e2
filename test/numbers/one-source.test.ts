import { spawn } from "node:child_process";
import path from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scope } from "../../lib/auth/scope";
import type { OverviewResponse } from "../../lib/features/overview/contract";
import { overviewQuery } from "../../lib/features/overview/contract";
import { getOverviewSeries } from "../../lib/features/overview/get-overview-series";
import { listViolations } from "../../lib/features/violations/list-violations";
import { createEffects } from "../../lib/idempotency";
import { silentLogger } from "../../lib/idempotency/test/helpers";
import { createTestDatabase, type TestDatabase } from "../database";

/**
 * One source per number on a screen (issue 35, finding 4): workers of a second system (tenants
 * harbor and quay, job type billing.issue_invoice) are SIGKILLed mid-minute with their rollups
 * unflushed, beside one that shuts down cleanly. Every violation figure the Overview shows (banner,
 * tile, chart, job types, tenants) and the Violations list must agree with the durable rows, and
 * the rollup figures must say that workers died before flushing and what is known to be missing.
 */

let db: TestDatabase;
const WORKER = path.join(import.meta.dirname, "unflushed-worker.ts");
const sum = (values: (number | null)[]) => values.reduce<number>((a, b) => a + (b ?? 0), 0);

function runAndKill(tenant: string, prefix: string, orders: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", WORKER], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      env: {
        ...process.env,
        UNFLUSHED_DATABASE_URL: db.sqlUrl,
        UNFLUSHED_TENANT: tenant,
        UNFLUSHED_PREFIX: prefix,
        UNFLUSHED_ORDERS: String(orders),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let killed = false;
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!killed && out.includes("DONE")) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (killed && signal === "SIGKILL") resolve();
      else reject(new Error(`worker exited ${code ?? signal} before being killed: ${out}${err}`));
    });
  });
}

async function durableViolations(tenant: string | null): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM uncaught_violation_keys WHERE $1::text IS NULL OR tenant_id = $1",
    [tenant],
  );
  return rows[0]?.n ?? 0;
}

async function listLength(scope: Scope, o: OverviewResponse): Promise<number> {
  let n = 0;
  let cursor: string | undefined;
  do {
    const page = await listViolations(scope, { from: new Date(o.from), to: new Date(o.to), limit: 7, cursor }, db.pool);
    n += page.violations.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return n;
}

/** Every violation count on the screen, by where it is shown. */
function violationFigures(o: OverviewResponse) {
  return {
    banner: o.violationGroups.reduce((a, g) => a + g.count, 0),
    tile: o.totals.uncaughtViolations,
    chart: o.series.violations.reduce((a, s) => a + sum(s.values), 0),
    jobTypes: o.jobTypes.reduce((a, j) => a + j.uncaughtViolations, 0),
    tenants: o.topTenants.reduce((a, t) => a + t.violations, 0),
  };
}

let now: Date;

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 10 });
  await db.pool.query("CREATE TABLE public.invoice_numbers (number text CONSTRAINT invoice_numbers_number_key UNIQUE)");
  // A worker that shuts down cleanly: its counts are flushed and its registration removed.
  const effects = createEffects({ db: db.pool, registry: new Registry(), logger: silentLogger(), flushInterval: 0 });
  await effects.ready();
  for (let i = 0; i < 4; i++) {
    const key = `invoice-issue:clean-${i}`;
    await effects
      .once({ tenant: "harbor", key, jobType: "billing.issue_invoice", messageId: `clean-m${i}` }, () =>
        db.pool.query("INSERT INTO public.invoice_numbers (number) VALUES ($1), ($1)", [`clean-${i}`]),
      )
      .catch((error: unknown) => {
        if ((error as { code?: string }).code !== "23505") throw error;
      });
  }
  await effects.close();
  // Two workers killed with everything they counted still in memory.
  await Promise.all([runAndKill("harbor", "h", 9), runAndKill("quay", "q", 6)]);
  // Past the registrations' TTL (4 heartbeats of 30 s): the killed workers' rows have lapsed.
  now = new Date(Date.now() + 5 * 60_000);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe("one source per number on a screen, after workers were SIGKILLed before flushing", () => {
  it("the platform's Overview: banner, tile, chart, job types, tenants and the list all count the durable rows", async () => {
    const durable = await durableViolations(null);
    const flushed = 4;
    expect(durable).toBeGreaterThan(flushed);
    const o = await getOverviewSeries(Scope.operator(), overviewQuery.parse({ window: "1h" }), { db: db.pool, now });
    expect(violationFigures(o)).toEqual({ banner: durable, tile: durable, chart: durable, jobTypes: durable, tenants: durable });
    expect(await listLength(Scope.operator(), o)).toBe(durable);
    // The rollups hold only what the clean worker flushed; the screen says what the killed ones took.
    expect(o.unflushed).toEqual({
      workers: 2,
      lastHeartbeat: expect.any(String),
      violationsMissingFromRollups: durable - flushed,
    });
    expect(o.notes.join(" ")).toContain("2 workers stopped without a clean shutdown in this range");
    expect(o.notes.join(" ")).toContain(`The rollups hold ${durable - flushed} fewer uncaught violations than the ${durable}`);
  });

  it("a platform admin narrowing to one tenant: that tenant's rows everywhere, and the killed workers still said", async () => {
    const durable = await durableViolations("quay");
    expect(durable).toBeGreaterThan(0);
    const o = await getOverviewSeries(Scope.operator(), overviewQuery.parse({ window: "1h", tenant: "quay" }), {
      db: db.pool,
      now,
    });
    expect(violationFigures(o)).toEqual({ banner: durable, tile: durable, chart: durable, jobTypes: durable, tenants: durable });
    expect(await listLength(Scope.operator().narrow("quay"), o)).toBe(durable);
    expect(o.unflushed.workers).toBe(2);
  });

  it("a tenant session: its own violation rows everywhere, and no fleet figure", async () => {
    const scope = Scope.ofPrincipal({ tenantId: "harbor" });
    const durable = await durableViolations("harbor");
    const o = await getOverviewSeries(scope, overviewQuery.parse({ window: "1h" }), { db: db.pool, now });
    expect(violationFigures(o)).toEqual({ banner: durable, tile: durable, chart: durable, jobTypes: durable, tenants: durable });
    expect(await listLength(scope, o)).toBe(durable);
    expect(o.totals).toMatchObject({ deliveries: null, redeliveries: null, claims: null });
    expect(o.jobTypes.every((j) => j.deliveries === null && j.redeliveries === null && j.claims === null)).toBe(true);
    expect(o.alerts).toEqual([]);
    expect(o.series.claimRate.every((v) => v === null)).toBe(true);
    expect(o.withheld).toEqual(expect.arrayContaining(["totals.deliveries", "alerts", "series.claimRate"]));
    expect(o.unflushed.violationsMissingFromRollups).toBeNull();
  });
});
