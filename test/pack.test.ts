import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createScratchDatabase } from "../lib/db/scratch";
import { readLibraryMigrations } from "../lib/idempotency/admin";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");

/** A user's worker, outside this repository, written against the installed package only. */
const WORKER = `import pg from "pg";
import { createEffects, type EffectResult, migrate } from "@onceboard/idempotency";
import * as workerApi from "@onceboard/idempotency";
import { releaseClaim } from "@onceboard/idempotency/admin";
import { checkIdempotent } from "@onceboard/idempotency/testing";
import type { PgBossWorkOptions } from "@onceboard/idempotency/pgboss";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
pool.on("error", () => {});
// The user's own database: the library installs its schema, under the name the user chose.
const installed = await migrate(pool, { schema: "app_effects" });
const effects = createEffects({ db: pool, schema: "app_effects", lease: "30s", wait: "5s", retention: "7d", maxRetryWindow: "3d" });
let charges = 0;
const capture = (messageId: string): Promise<EffectResult<{ chargeId: string }>> =>
  effects.once({ tenant: "acme", key: "capture:order-1", jobType: "order.capture", messageId }, async (claim) => {
    charges++;
    return { chargeId: \`ch_\${claim.providerKey.slice(0, 8)}\` };
  });
const first = await capture("m-1");
const second = await capture("m-2");
const adapters: Record<string, string> = {};
for (const entry of ["pgboss", "bullmq"]) {
  adapters[entry] = await import(\`@onceboard/idempotency/\${entry}\`).then(() => "loaded", (error: Error) => error.message);
}
const options: Partial<PgBossWorkOptions<unknown, unknown>> = {};
// The operator's entry point is its own: the release is there, not in the worker's API.
const release = await releaseClaim(pool, { tenant: "acme", key: "capture:order-1", releasedBy: "ops", schema: "app_effects" });
const adminInWorkerApi = "releaseClaim" in workerApi;
console.log(JSON.stringify({ installed: installed.applied, first, second, charges, kit: typeof checkIdempotent, adapters, options, release, adminInWorkerApi, metrics: effects.registry === undefined }));
await effects.close();
await pool.end();
`;

/**
 * `npm run pack:lib` builds the worker library into a tarball that installs into a
 * project outside this repository, type-checks a worker written against it, and claims in PostgreSQL.
 */
describe("the worker library as a package", () => {
  let project: string;
  // An empty database (not the migrated template), reached without any search_path help.
  let empty: { pool: pg.Pool; drop(): Promise<void> };
  let plainUrl: string;
  beforeAll(async () => {
    project = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-pack-"));
    const scratch = await createScratchDatabase(inject("adminDatabaseUrl"), { prefix: "onceboard_pack" });
    plainUrl = scratch.url;
    const pool = new pg.Pool({ connectionString: plainUrl, max: 2 });
    empty = {
      pool,
      drop: async () => {
        await pool.end();
        await scratch.drop();
      },
    };
  });
  afterAll(async () => {
    await empty?.drop();
    if (project) await fs.rm(project, { recursive: true, force: true });
  });

  it("installs from its tarball, type-checks a worker and runs a claim; adapters load only with their broker", async () => {
    const { stdout } = await run("npm", ["run", "--silent", "pack:lib"], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const tarball = stdout.trim().split("\n").at(-1)!;
    expect(tarball).toMatch(/onceboard-idempotency-[\d.]+\.tgz$/);

    await fs.writeFile(path.join(project, "package.json"), JSON.stringify({ name: "pack-user", private: true, type: "module" }));
    // pg, the one dependency, comes from npm's cache or the registry; prom-client, pg-boss, bullmq and ioredis are not installed.
    await run(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        tarball,
        "@types/pg@8.23.1",
        "@types/node@20.19.43",
      ],
      { cwd: project, maxBuffer: 16 * 1024 * 1024 },
    );
    const installed = JSON.parse(
      await fs.readFile(path.join(project, "node_modules/@onceboard/idempotency/package.json"), "utf8"),
    ) as { dependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional: boolean }> };
    expect(Object.keys(installed.dependencies)).toEqual(["pg"]);
    // Every broker, the lazily loaded drizzle-orm and mysql2, the mariadb driver (typed, never imported), and
    // OpenTelemetry: optional, never installed for a user who lacks them.
    expect(Object.keys(installed.peerDependenciesMeta).sort()).toEqual([
      "@opentelemetry/api",
      "amqplib",
      "bullmq",
      "drizzle-orm",
      "ioredis",
      "mariadb",
      "mysql2",
      "nats",
      "pg-boss",
      "prom-client",
    ]);

    await fs.writeFile(path.join(project, "worker.mts"), WORKER);
    await fs.writeFile(
      path.join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          skipLibCheck: true,
          outDir: "out",
          types: ["node"],
        },
        files: ["worker.mts"],
      }),
    );
    // The user's type-check: strict, Node's own module resolution, against the package's .d.ts.
    await run(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", project], { cwd: project }).catch(
      (error: { stdout: string }) => {
        throw new Error(`the worker does not type-check against the package:\n${error.stdout}`);
      },
    );

    const result = await run(process.execPath, [path.join(project, "out/worker.mjs")], {
      cwd: project,
      env: { ...process.env, DATABASE_URL: plainUrl },
    });
    const report = JSON.parse(result.stdout.trim().split("\n").at(-1)!) as {
      installed: string[];
      metrics: boolean;
      first: { result: string; outcome: { chargeId: string } };
      second: { result: string; outcome: { chargeId: string } };
      charges: number;
      kit: string;
      adapters: Record<string, string>;
      release: { released: boolean; reason: string };
      adminInWorkerApi: boolean;
    };
    expect(report.installed).toEqual(readLibraryMigrations().map((m) => m.name));
    // No prom-client installed: claims run, metrics count nothing.
    expect(report.metrics).toBe(true);
    expect(report.first.result).toBe("ran");
    expect(report.second).toMatchObject({ result: "duplicate", outcome: report.first.outcome });
    expect(report.charges).toBe(1);
    expect(report.kit).toBe("function");
    expect(report.release).toMatchObject({ released: false, reason: "completed" });
    expect(report.adminInWorkerApi).toBe(false);
    // Each adapter is its own entry point: without its broker installed, only it fails to load.
    expect(report.adapters.pgboss).toMatch(/Cannot find (package|module) 'pg-boss'/);
    expect(report.adapters.bullmq).toMatch(/Cannot find (package|module) 'bullmq'/);
    const { rows } = await empty.pool.query(
      "SELECT status FROM app_effects.effects WHERE tenant_id = 'acme' AND key = 'capture:order-1'",
    );
    expect(rows).toEqual([{ status: "completed" }]);
    // Nothing of the console or the demo, and nothing outside the library's schema.
    const { rows: outside } = await empty.pool.query(
      `SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('app_effects', 'pg_catalog', 'information_schema', 'pg_toast')`,
    );
    expect(outside).toEqual([]);
  }, 300_000);
});
