import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import {
  DAY_SECONDS,
  DEFAULT_RETENTION_SETTINGS,
  EFFECT_STATUSES,
  isReleasable,
  isStuck,
  PARTITION_INTERVALS,
  releasableSql,
  stuckSql,
  TIMELINE_ANSWERS,
} from "../states";
import { readStuckClaims } from "../stuck-claims";

const dump = fs.readFileSync(path.resolve(import.meta.dirname, "../../../prisma/schema.sql"), "utf8");

/** The values of a CHECK constraint over a text array or list, in the schema dump of a fresh install. */
function checkValues(constraint: string): string[] {
  const line = dump.split("\n").find((l) => l.includes(`CONSTRAINT ${constraint} CHECK`));
  if (!line) throw new Error(`no constraint ${constraint} in prisma/schema.sql`);
  return [...line.matchAll(/'([^']+)'::text/g)].map((m) => m[1] as string);
}

/** A column's DEFAULT in the dump, e.g. `7` or `'day'::text`. */
function columnDefault(column: string): string {
  const line = dump.split("\n").find((l) => l.trimStart().startsWith(`${column} `) && l.includes("DEFAULT"));
  if (!line) throw new Error(`no default for ${column} in prisma/schema.sql`);
  return (/DEFAULT (\S+?),?$/.exec(line.trim())?.[1] ?? "").replace(/'([^']*)'::text/, "$1");
}

describe("the library's words are its schema's", () => {
  it("effect statuses, timeline answers and partition intervals are the tables' CHECKs", () => {
    expect(checkValues("effects_status_check")).toEqual([...EFFECT_STATUSES]);
    expect(checkValues("delivery_timeline_answer_check")).toEqual([...TIMELINE_ANSWERS]);
    expect(checkValues("retention_settings_partition_interval_check")).toEqual([...PARTITION_INTERVALS]);
  });

  it("the default settings are retention_settings' column defaults", () => {
    expect(Number(columnDefault("retention_days")) * DAY_SECONDS).toBe(DEFAULT_RETENTION_SETTINGS.retentionSeconds);
    expect(Number(columnDefault("max_retry_window_days")) * DAY_SECONDS).toBe(DEFAULT_RETENTION_SETTINGS.maxRetryWindowSeconds);
    expect(columnDefault("partition_interval")).toBe(DEFAULT_RETENTION_SETTINGS.interval);
    expect(Number(columnDefault("premake_count"))).toBe(DEFAULT_RETENTION_SETTINGS.premakeCount);
  });
});

describe("stuck and releasable: one rule, in TypeScript and in SQL", () => {
  let db: TestDatabase;
  // Whole seconds: the comparisons at the boundary are exact in both languages.
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);
  const rows = [
    { key: "s:expired", status: "in_progress", policy: "external", leaseUntil: at(-60) },
    // Its lease ends this very instant: the next claim takes it over, so it is stuck.
    { key: "s:boundary", status: "in_progress", policy: "external", leaseUntil: at(0) },
    { key: "s:alive", status: "in_progress", policy: "external", leaseUntil: at(1) },
    { key: "s:at-most-once", status: "in_progress", policy: "at_most_once", leaseUntil: at(-60) },
    { key: "s:completed", status: "completed", policy: "external", leaseUntil: null },
    { key: "s:failed", status: "failed", policy: "external", leaseUntil: null },
  ] as const;

  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 2 });
    for (const r of rows) {
      await db.pool.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, attempt, lease_until, created_at)
         VALUES ('acme', $1, 'capture', $2, $3, 'w1:gone', 1, $4, $5)`,
        [r.key, r.status, r.policy, r.leaseUntil, at(-120)],
      );
    }
  });
  afterAll(async () => {
    await db?.drop();
  });

  const keysWhere = async (condition: string) =>
    (await db.pool.query<{ key: string }>(`SELECT key FROM effects WHERE ${condition} ORDER BY key`, [now])).rows.map(
      (r) => r.key,
    );

  it("the SQL fragments select exactly the rows the predicates name", async () => {
    const stuck = rows.filter((r) => isStuck(r, now)).map((r) => r.key);
    const releasable = rows.filter((r) => isReleasable(r, now)).map((r) => r.key);
    expect(stuck.sort()).toEqual(["s:at-most-once", "s:boundary", "s:expired"]);
    expect(releasable.sort()).toEqual(["s:boundary", "s:expired"]);
    expect(await keysWhere(stuckSql("$1::timestamptz"))).toEqual(stuck.sort());
    expect(await keysWhere(releasableSql("$1::timestamptz"))).toEqual(releasable.sort());
  });

  it("readStuckClaims lists the stuck claims, the boundary and at-most-once included, oldest lease first", async () => {
    const read = await readStuckClaims(db.pool, { now, limit: 10 });
    // Two leases ended a minute ago (ties go by key), then the one ending this instant.
    expect(read.claims.map((c) => c.key)).toEqual(["s:at-most-once", "s:expired", "s:boundary"]);
    expect(read.byTenant).toEqual(new Map([["acme", 3]]));
    expect((await readStuckClaims(db.pool, { now, limit: 10, tenant: "globex" })).claims).toEqual([]);
    expect((await readStuckClaims(db.pool, { now, limit: 1 })).claims).toHaveLength(1);
  });
});
