import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import mysql from "mysql2/promise";
import { describe, expect, it } from "vitest";
import { LeaseLostError } from "../errors";
import { migrate } from "../index";
import { MYSQL_MIGRATIONS_DIR, readLibraryMigrations } from "../migrate";
import { migrateMysql } from "../migrate-mysql";
import { assertSchemaKnown } from "../migration-history";
import type { MysqlPoolLike } from "../mysql";
import { DEFAULT_RETENTION_SETTINGS, EFFECT_STATUSES, PARTITION_INTERVALS, TIMELINE_ANSWERS } from "../states";
import { withEachEngine } from "./engine-suite";
import { type EngineDatabase, mariadbPool, testMariadbUrl } from "./engines";
import { testEffects } from "./helpers";

/**
 * What is MySQL's and MariaDB's own: the claim never decides by affected rows (the drivers turn
 * CLIENT_FOUND_ROWS on by default), keys compare byte for byte (no case folding, no trailing-space
 * padding), migrate() as an installer, and the schema holding the library's words.
 */
let db: EngineDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 7)}`;

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  () => {
    describe("CLIENT_FOUND_ROWS", () => {
      it("on or off, every claim answers the same: fresh, duplicate, exactly one takeover, the old owner's completion refused", async () => {
        for (const flags of [["FOUND_ROWS"], ["-FOUND_ROWS"]]) {
          const url = new URL(db.url);
          const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 12, timezone: "Z", flags });
          try {
            const effects = testEffects(pool as unknown as MysqlPoolLike, { schema: db.schema, wait: "5s" });
            const key = uniq("capture:order");
            const crashed = await effects.claim({ tenant: "acme", key, jobType: "j" });
            expect(crashed.kind, flags[0]).toBe("owned");
            await db.expireLease("acme", key);
            let runs = 0;
            const results = await Promise.all(
              Array.from({ length: 8 }, () =>
                effects.once({ tenant: "acme", key, jobType: "j" }, () => {
                  runs++;
                  return "redone";
                }),
              ),
            );
            expect(runs, flags[0]).toBe(1);
            expect(
              results.filter((r) => r.result === "ran" && r.attempt === 2),
              flags[0],
            ).toHaveLength(1);
            expect(
              results.filter((r) => r.result === "duplicate" && r.outcome === "redone"),
              flags[0],
            ).toHaveLength(7);
            if (crashed.kind === "owned") await expect(crashed.claim.complete("stale")).rejects.toBeInstanceOf(LeaseLostError);
            expect(await db.effects("acme", key), flags[0]).toMatchObject([
              { status: "completed", attempt: 2, outcome: "redone" },
            ]);
            await effects.close();
          } finally {
            await pool.end();
          }
        }
      });

      it("a naive claim that trusts the affected rows of INSERT … ON DUPLICATE KEY UPDATE runs twice with the drivers' default", async () => {
        // The default of mysql2 and of the mariadb driver: CLIENT_FOUND_ROWS on.
        const pool = mysql.createPool({ uri: db.url, connectionLimit: 2 });
        try {
          await pool.query("CREATE TABLE IF NOT EXISTS naive_upserts (k VARCHAR(255) PRIMARY KEY, owner VARCHAR(64))");
          const claim = async (owner: string) => {
            const [header] = await pool.query(
              "INSERT INTO naive_upserts (k, owner) VALUES ('capture:naive', ?) ON DUPLICATE KEY UPDATE owner = owner",
              [owner],
            );
            // 1 means "inserted" only without CLIENT_FOUND_ROWS: here "already there" is 1 as well.
            return (header as { affectedRows: number }).affectedRows === 1;
          };
          expect([await claim("first"), await claim("second")]).toEqual([true, true]);
        } finally {
          await pool.end();
        }
      });
    });

    describe("keys", () => {
      it("compare byte for byte: case, a trailing space and 4-byte characters are distinct keys", async () => {
        const effects = testEffects(db);
        const base = uniq("capture:Order");
        const keys = [base, base.toLowerCase(), `${base} `, `${base}😀`, `${base}😁`];
        const answers = [];
        for (const key of keys) answers.push(await effects.once({ tenant: "acme", key, jobType: "j" }, () => key));
        expect(answers.map((a) => [a.result, a.outcome])).toEqual(keys.map((key) => ["ran", key]));
        // And the tenant too.
        const tenantKey = uniq("capture:t");
        expect((await effects.once({ tenant: "Acme", key: tenantKey, jobType: "j" }, () => 1)).result).toBe("ran");
        expect((await effects.once({ tenant: "acme", key: tenantKey, jobType: "j" }, () => 1)).result).toBe("ran");
        expect((await effects.once({ tenant: "acme ", key: tenantKey, jobType: "j" }, () => 1)).result).toBe("ran");
        await effects.close();
      });
    });

    describe("the schema", () => {
      it("holds the library's words: statuses, timeline answers, partition intervals and the default settings", async () => {
        const checks = await db.rows<{ name: string; clause: string }>(
          "SELECT CONSTRAINT_NAME AS name, CHECK_CLAUSE AS clause FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()",
        );
        const quoted = (name: string) => {
          const clause = checks.find((c) => c.name === name)?.clause ?? "";
          return [...clause.matchAll(/'([^']+)'/g)].map((m) => m[1]).sort();
        };
        expect(quoted("effects_status_check")).toEqual([...EFFECT_STATUSES].sort());
        expect(quoted("delivery_timeline_answer_check")).toEqual([...TIMELINE_ANSWERS].sort());
        expect(quoted("retention_settings_partition_interval_check")).toEqual([...PARTITION_INTERVALS].sort());
        const [settings] = await db.rows<Record<string, unknown>>(
          "SELECT retention_days, max_retry_window_days, partition_interval, premake_count FROM retention_settings WHERE id = 1",
        );
        expect({
          retentionSeconds: Number(settings?.retention_days) * 86_400,
          maxRetryWindowSeconds: Number(settings?.max_retry_window_days) * 86_400,
          interval: settings?.partition_interval,
          premakeCount: Number(settings?.premake_count),
        }).toEqual(DEFAULT_RETENTION_SETTINGS);
      });
    });

    describe("migrate()", () => {
      it("installs into a database of the schema's name, is a no-op the second time, and two at once apply each migration once", async () => {
        const name = `ob_m${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
        const pool = mariadbPool(testMariadbUrl(), "mysql", 4);
        try {
          const [a, b] = await Promise.all([
            migrate(pool as unknown as MysqlPoolLike, { schema: name }),
            migrate(`${testMariadbUrl()}/mysql`, { schema: name }),
          ]);
          const all = readLibraryMigrations(MYSQL_MIGRATIONS_DIR).map((m) => m.name);
          expect([...a.applied, ...b.applied].sort()).toEqual(all);
          expect([...a.alreadyApplied, ...b.alreadyApplied].sort()).toEqual(all);
          const again = await migrate(pool as unknown as MysqlPoolLike, { schema: name });
          expect(again).toEqual({ schema: name, applied: [], alreadyApplied: all });
          const [recorded] = (await pool.query(
            "SELECT TABLE_COMMENT AS c FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'migrations'",
            [name],
          )) as unknown as [{ c: string }[]];
          expect(recorded[0]?.c).toMatch(/^migrated by @onceboard\/idempotency /);
        } finally {
          await pool.query(`DROP DATABASE IF EXISTS ${name}`);
          await pool.end();
        }
      });

      it("refuses a migration edited after it was applied", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-mysql-migrations-"));
        try {
          for (const m of readLibraryMigrations(MYSQL_MIGRATIONS_DIR)) {
            fs.writeFileSync(path.join(dir, `${m.name}.sql`), `${m.sql}\n-- edited\n`);
          }
          const edited = readLibraryMigrations(dir);
          await expect(
            migrateMysql(db.pool as unknown as MysqlPoolLike, edited, { schema: db.schema }, (schema, applied, comment) =>
              assertSchemaKnown(schema, applied, edited, comment),
            ),
          ).rejects.toThrow(/was edited after it was applied/);
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      });
    });
  },
  { poolSize: 12, engines: ["mariadb"] },
);
