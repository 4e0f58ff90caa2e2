import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PrismaMariaDb } from "@prisma/adapter-mariadb";
import type * as mariadb from "mariadb";
import { Registry } from "prom-client";
import { afterAll, expect, it } from "vitest";
import { InvalidEffectInputError, InvalidEffectsOptionsError, NotInTransactionError } from "../errors";
import { createEffects } from "../index";
import { withEachEngine } from "./engine-suite";
import type { EngineDatabase } from "./engines";
import { silentLogger, testEffects } from "./helpers";

/**
 * The `mariadb` driver as the library's handle, beyond the core suites' mariadb-driver variant:
 * the driver's own defaults (CLIENT_FOUND_ROWS on), the connection a step gets, and Prisma on
 * @prisma/adapter-mariadb, which runs on this driver and which the library refuses with a reason.
 */

let db: EngineDatabase;
const pool = () => db.pool as unknown as mariadb.Pool;

/** A Prisma client for MySQL, generated from a one-model schema (the project's own schema is PostgreSQL's). */
const PRISMA_DIR = path.resolve(".test-results", `prisma-mysql-${process.pid}`);
const PRISMA_SCHEMA = `generator client {
  provider     = "prisma-client"
  output       = "./generated"
  moduleFormat = "esm"
}
datasource db {
  provider = "mysql"
}
model Probe {
  id Int @id
}
`;

type PrismaMysql = {
  $queryRawUnsafe(sql: string, ...values: unknown[]): Promise<unknown>;
  $transaction<R>(fn: (tx: PrismaMysql) => Promise<R>): Promise<R>;
  $disconnect(): Promise<void>;
};
let prisma: PrismaMysql | undefined;

/** Generates it for the test that needs it (not at load: outside CI MariaDB's tests may be skipped). */
function generatePrismaMysql(): void {
  mkdirSync(PRISMA_DIR, { recursive: true });
  writeFileSync(path.join(PRISMA_DIR, "schema.prisma"), PRISMA_SCHEMA);
  // `generate` never runs the schema engine the CLI would download: any executable will do (scripts/prisma-generate.mjs).
  const generated = spawnSync(
    path.resolve("node_modules", ".bin", "prisma"),
    ["generate", "--schema", path.join(PRISMA_DIR, "schema.prisma")],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
        PRISMA_HIDE_UPDATE_MESSAGE: "1",
        CHECKPOINT_DISABLE: "1",
      },
    },
  );
  if (generated.status !== 0) throw new Error(`prisma generate (mysql) failed: ${generated.stderr}`);
}

afterAll(async () => {
  await prisma?.$disconnect();
  rmSync(PRISMA_DIR, { recursive: true, force: true });
});

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  () => {
    it("the driver's defaults count a no-op upsert as a changed row (CLIENT_FOUND_ROWS); the store still tells a claim from a duplicate", async () => {
      await db.run("CREATE TABLE IF NOT EXISTS found_rows (k VARCHAR(64) PRIMARY KEY)");
      await pool().query("INSERT INTO found_rows VALUES ('a')");
      const upsert = (await pool().query("INSERT INTO found_rows VALUES ('a') ON DUPLICATE KEY UPDATE k = k")) as {
        affectedRows: number;
      };
      expect(upsert.affectedRows).toBe(1);

      const effects = testEffects(db);
      let runs = 0;
      const deliver = () =>
        effects.once({ tenant: "acme", key: "capture:found-rows", jobType: "order.capture" }, () => {
          runs++;
          return { charge: "ch_1" };
        });
      expect(await deliver()).toMatchObject({ result: "ran" });
      expect(await deliver()).toMatchObject({ result: "duplicate", outcome: { charge: "ch_1" } });
      expect(runs).toBe(1);
      await effects.close();
    });

    it("a transactional step the library opens on a mariadb pool gets the driver's own connection, and rolls back with it", async () => {
      await db.run("CREATE TABLE IF NOT EXISTS step_writes (k VARCHAR(64) PRIMARY KEY)");
      const effects = testEffects(db);
      const write = (key: string, fail: boolean) =>
        effects.once({ tenant: "acme", key, jobType: "j", policy: "transactional" }, async (_claim, tx) => {
          const connection = tx as unknown as mariadb.PoolConnection;
          expect(typeof connection.batch).toBe("function");
          await connection.query("INSERT INTO step_writes VALUES (?)", [key]);
          if (fail) throw new Error("the step fails after its write");
          return "written";
        });
      await expect(write("tx:fails", true)).rejects.toThrow("the step fails after its write");
      expect(await write("tx:commits", false)).toMatchObject({ result: "ran", outcome: "written" });
      expect(await db.rows("SELECT k FROM step_writes ORDER BY k")).toEqual([{ k: "tx:commits" }]);
      expect(await db.effects("acme", "tx:fails")).toEqual([]);
      await effects.close();
    });

    it("a mariadb connection in autocommit, or the pool itself, is refused as a step's tx before anything is claimed", async () => {
      const effects = testEffects(db);
      const connection = await pool().getConnection();
      try {
        for (const tx of [connection, pool()]) {
          await expect(
            effects.once(
              { tenant: "acme", key: "tx:autocommit", jobType: "j", policy: "transactional", tx: tx as never },
              () => 1,
            ),
          ).rejects.toBeInstanceOf(NotInTransactionError);
        }
        expect(await db.effects("acme", "tx:autocommit")).toEqual([]);
      } finally {
        await connection.release();
        await effects.close();
      }
    });

    it("Prisma on @prisma/adapter-mariadb is refused as db and as tx, saying to pass the mariadb pool the adapter runs on", async () => {
      generatePrismaMysql();
      const { PrismaClient } = (await import(path.join(PRISMA_DIR, "generated", "client.ts"))) as {
        PrismaClient: new (options: { adapter: PrismaMariaDb }) => PrismaMysql;
      };
      // The documented arrangement: one mariadb pool, for Prisma's adapter and for the library (the adapter
      // bundles its own copy of the driver, whose types differ from the top-level one's).
      prisma = new PrismaClient({ adapter: new PrismaMariaDb(pool() as never) });
      const client = prisma;
      // Why: a CALL's result, which every claim on MySQL is, comes back without its column names.
      await db.run("CREATE PROCEDURE IF NOT EXISTS probe_call(IN a INT) SELECT a AS x, 'y' AS z");
      expect(await client.$queryRawUnsafe("CALL probe_call(?)", 7)).not.toEqual([{ x: 7, z: "y" }]);

      expect(() => createEffects({ db: client as never, registry: new Registry(), logger: silentLogger() })).toThrow(
        InvalidEffectsOptionsError,
      );
      expect(() => createEffects({ db: client as never, registry: new Registry(), logger: silentLogger() })).toThrow(
        /new PrismaMariaDb\(pool\)/,
      );
      const effects = testEffects(db);
      const refused = await client
        .$transaction((tx) =>
          effects.once({ tenant: "acme", key: "prisma:tx", jobType: "j", policy: "transactional", tx: tx as never }, () => 1),
        )
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InvalidEffectInputError);
      expect((refused as InvalidEffectInputError).field).toBe("tx");
      expect(await db.effects("acme", "prisma:tx")).toEqual([]);
      await effects.close();
    });
  },
  { engines: ["mariadb-driver"], poolSize: 5 },
);
