import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script, no declarations
import { checkEffectOwner, DEMO_SEEDERS } from "../scripts/check-effect-owner.mjs";
// @ts-expect-error: a plain ES module script (npm run lint runs it with node), no declarations
import * as layerRules from "../scripts/check-layers.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const { checkLayers, FEATURES, KNOWN_EXCEPTIONS, LAYERS, layerLoops, layerTable, staleLayerTable, TABLE_DOC } = layerRules;
interface Problem {
  from: string;
  to: string;
  why: string;
}
const check = checkLayers as (options?: { root?: string; files?: Record<string, string> }) => Problem[];

/** The layout table of docs/architecture.md, checked by `npm run lint` (scripts/check-layers.mjs). */
describe("layer rules", () => {
  it("hold on today's tree, with no exceptions left in the library folders", () => {
    const arrows = check().map((p) => `${p.from} -> ${p.to}`);
    expect(arrows.sort()).toEqual([...(KNOWN_EXCEPTIONS as string[])].sort());
    for (const arrow of KNOWN_EXCEPTIONS as string[]) expect(arrow).toMatch(/^lib\/(idempotency|queues)\//);
  });

  it.each([
    [
      "the library importing the console's pool",
      "lib/idempotency/planted.ts",
      `import { getPool } from "../db/pool";`,
      "lib/db/pool.ts",
    ],
    ["the library importing a non-dependency", "lib/idempotency/planted.ts", `import next from "next";`, "next"],
    [
      "lib/db importing a read model",
      "lib/db/planted.ts",
      `import { getOverviewSeries } from "../features/overview/get-overview-series";`,
      "lib/features/overview/get-overview-series.ts",
    ],
    ["a route importing lib/db", "app/api/v1/planted/route.ts", `import { getPool } from "@/lib/db/pool";`, "lib/db/pool.ts"],
    [
      "a component importing a read model",
      "components/planted.tsx",
      `import { getWorkers } from "@/lib/features/workers/get-workers";`,
      "lib/features/workers/get-workers.ts",
    ],
    ["a component importing the config", "components/planted.tsx", `import { loadConfig } from "@/lib/config";`, "lib/config.ts"],
    [
      "the demo importing lib/db",
      "lib/demo/planted.ts",
      `export { findFreePort } from "../db/free-port";`,
      "lib/db/free-port.ts",
    ],
    [
      "an adapter importing library internals",
      "lib/queues/planted.ts",
      `import { CLAIM } from "../idempotency/claim-sql";`,
      "lib/idempotency/claim-sql.ts",
    ],
    [
      "the soak importing an adapter's internals",
      "lib/soak/planted.ts",
      `import { waitFor } from "../queues/testing/wait";`,
      "lib/queues/testing/wait.ts",
    ],
    [
      "a benchmark importing library internals",
      "bench/planted.ts",
      `const m = await import("../lib/idempotency/claim-sql");`,
      "lib/idempotency/claim-sql.ts",
    ],
    [
      "a route building its own Scope",
      "app/api/v1/planted/route.ts",
      `import { Scope } from "@/lib/auth/scope";`,
      "lib/auth/scope.ts",
    ],
    [
      "a page building its own Scope",
      "app/planted/page.tsx",
      `import { type Scope } from "@/lib/auth/scope";`,
      "lib/auth/scope.ts",
    ],
    [
      "a read model building its own Scope",
      "lib/features/overview/planted.ts",
      `import { Scope } from "../../auth/scope";`,
      "lib/auth/scope.ts",
    ],
    [
      "a shared console helper importing lib/auth",
      "lib/console/planted.ts",
      `import type { Role } from "../auth/auth-types";`,
      "lib/auth/auth-types.ts",
    ],
    [
      "a feature importing a feature it does not build on",
      "lib/features/violations/planted.ts",
      `import { getEffect } from "../keys-and-effects/get-effect";`,
      "lib/features/keys-and-effects/get-effect.ts",
    ],
    [
      "HTTP helpers importing a feature",
      "lib/api/planted.ts",
      `import { RetentionError } from "../features/retention-and-gaps/errors";`,
      "lib/features/retention-and-gaps/errors.ts",
    ],
    [
      "identity importing a feature's writes",
      "lib/auth/planted.ts",
      `import { releaseEffect } from "../features/keys-and-effects/release-effect";`,
      "lib/features/keys-and-effects/release-effect.ts",
    ],
    [
      "a component importing the contract's zod schemas",
      "components/planted.tsx",
      `import { effectDetail } from "@/lib/features/keys-and-effects/contract";`,
      "lib/features/keys-and-effects/contract.ts",
    ],
  ])("catch %s", (_what, file, source, target) => {
    const problems = check({ files: { [file]: source } });
    expect(problems).toEqual([expect.objectContaining({ from: file, to: target })]);
  });

  it.each([
    [
      "a route importing a read model",
      "app/planted/page.tsx",
      `import { getWorkers } from "@/lib/features/workers/get-workers";`,
    ],
    [
      "a component importing a types file",
      "components/planted.tsx",
      `import type { WorkerStatus } from "@/lib/features/workers/workers-types";`,
    ],
    [
      "a component importing the contract's inferred types",
      "components/planted.tsx",
      `import type { EffectDetail } from "@/lib/features/keys-and-effects/contract";`,
    ],
    ["a component importing the formatting module", "components/planted.tsx", `import { formatUtc } from "@/lib/format";`],
    [
      "an adapter importing the library's entry point",
      "lib/queues/planted.ts",
      `import { createEffects } from "../idempotency";`,
    ],
    [
      "the library importing pg and node built-ins",
      "lib/idempotency/planted.ts",
      `import pg from "pg";\nimport { randomUUID } from "node:crypto";`,
    ],
    [
      "a read model taking a Scope",
      "lib/features/retention-and-gaps/planted.ts",
      `import type { Scope } from "../../auth/scope";`,
    ],
    ["withAuth making the Scope", "lib/auth/planted.ts", `import { Scope } from "./scope";`],
    [
      "a feature importing a feature it builds on",
      "lib/features/bulk-actions/planted.ts",
      `import type { FindingSummary } from "../reconciliation/contract";`,
    ],
  ])("allow %s", (_what, file, source) => {
    expect(check({ files: { [file]: source } })).toEqual([]);
  });

  it("catch an import loop, a type-only one included, naming its files in order", () => {
    const problems = check({
      files: {
        "lib/features/overview/a-types.ts": `import type { B } from "./b";\nexport type A = { b: B };`,
        "lib/features/overview/b.ts": `import { c } from "./c";\nexport type B = number;\nexport const b = c;`,
        "lib/features/overview/c.ts": `import type { A } from "./a-types";\nexport const c = 1 as unknown as A;`,
      },
    });
    expect(problems).toEqual([
      {
        from: "lib/features/overview/a-types.ts",
        to: "lib/features/overview/b.ts",
        why: "import loop: lib/features/overview/a-types.ts -> lib/features/overview/b.ts -> lib/features/overview/c.ts -> lib/features/overview/a-types.ts",
      },
    ]);
  });

  it("leave a test out of the loops: it imports what it tests and nothing imports it", () => {
    const files = {
      "lib/features/overview/a.ts": `export const a = 1;`,
      "lib/features/overview/a.test.ts": `import { a } from "./a";\nexport const t = a;`,
    };
    expect(check({ files })).toEqual([]);
  });

  it("catch a folder of lib/features that FEATURES does not list", () => {
    expect(check({ files: { "lib/features/planted/read.ts": "export const x = 1;" } })).toEqual([
      expect.objectContaining({
        from: "lib/features/planted/read.ts",
        why: expect.stringContaining("not a feature of FEATURES"),
      }),
    ]);
  });

  it("point one way: the table's own arrows, the features' included, form no loop", () => {
    expect(layerLoops()).toEqual([]);
    const features = FEATURES as { name: string; may: string[] }[];
    for (const [i, feature] of features.entries())
      for (const name of feature.may) expect(features.findIndex((other) => other.name === name)).toBeLessThan(i);
    const looping = (LAYERS as { name: string; may: string[] }[]).map((layer) =>
      layer.name === "lib/console" ? { ...layer, may: [...layer.may, "lib/features/overview"] } : layer,
    );
    expect(layerLoops(looping)).toEqual([
      expect.stringMatching(/^the layer table loops: .*lib\/console.*lib\/features\/overview/),
    ]);
  });

  const scratch = path.join(os.tmpdir(), `onceboard-layers-${process.pid}`);
  afterAll(() => fs.rm(scratch, { recursive: true, force: true }));

  it("makes the lint command fail on a planted upward import", async () => {
    await fs.mkdir(path.join(scratch, "lib/idempotency"), { recursive: true });
    await fs.mkdir(path.join(scratch, "lib/features/overview"), { recursive: true });
    await fs.writeFile(
      path.join(scratch, "lib/features/overview/get-overview-series.ts"),
      "export const getOverviewSeries = 1;\n",
    );
    await fs.writeFile(
      path.join(scratch, "lib/idempotency/index.ts"),
      `export { getOverviewSeries } from "../features/overview/get-overview-series";\n`,
    );
    const failure = await promisify(execFile)("node", [path.join(ROOT, "scripts/check-layers.mjs"), "--root", scratch]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("layers: lib/idempotency/index.ts imports lib/features/overview/get-overview-series.ts");
    const manifest = JSON.parse(await fs.readFile(path.join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.lint).toContain("node scripts/check-layers.mjs");
  });

  it("makes the lint command fail on a planted import loop", async () => {
    const tree = path.join(scratch, "loop");
    await fs.mkdir(path.join(tree, "lib/features/audit"), { recursive: true });
    await fs.writeFile(
      path.join(tree, "lib/features/audit/contract.ts"),
      `import { KINDS } from "./audit-types";\nexport const k = KINDS;\n`,
    );
    await fs.writeFile(
      path.join(tree, "lib/features/audit/audit-types.ts"),
      `import type { k } from "./contract";\nexport const KINDS = [] as (typeof k)[];\n`,
    );
    const failure = await promisify(execFile)("node", [path.join(ROOT, "scripts/check-layers.mjs"), "--root", tree]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain(
      "import loop: lib/features/audit/audit-types.ts -> lib/features/audit/contract.ts -> lib/features/audit/audit-types.ts",
    );
  });

  it("are what docs/architecture.md shows: its table is printed from LAYERS", () => {
    expect(staleLayerTable()).toBeUndefined();
    expect(layerTable()).toContain(
      "| `components/` | React components | only `lib/**/*-types.ts` files, `lib/format.ts`, `lib/idempotency/states.ts`, `lib/features/` as types only | any |",
    );
  });

  it("makes the lint command fail when the doc's table is stale", async () => {
    const stale = path.join(scratch, "stale-doc");
    await fs.mkdir(path.join(stale, path.dirname(TABLE_DOC as string)), { recursive: true });
    const doc = await fs.readFile(path.join(ROOT, TABLE_DOC as string), "utf8");
    const edited = doc.replace(
      /^\| `lib\/console\/` \|(.*)\| `lib\/db`, /m,
      (_row, holds: string) => `| \`lib/console/\` |${holds}| \`lib/auth\`, \`lib/db\`, `,
    );
    expect(edited).not.toBe(doc);
    await fs.writeFile(path.join(stale, TABLE_DOC as string), edited);
    const run = (root: string) =>
      promisify(execFile)("node", [path.join(ROOT, "scripts/check-layers.mjs"), "--root", root]).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
    const failure = await run(stale);
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain(`${TABLE_DOC}'s layer table is stale`);
    await fs.writeFile(path.join(stale, TABLE_DOC as string), doc);
    expect(await run(stale)).toBeUndefined();
  });
});

interface EffectWrite {
  file: string;
  line: number;
  what: string;
}
const checkOwner = checkEffectOwner as (options?: { root?: string; files?: Record<string, string> }) => {
  problems: EffectWrite[];
  stale: string[];
};

/** Only lib/idempotency changes the effects table or computes its claim's lock key (scripts/check-effect-owner.mjs). */
describe("the library owns the effects table", () => {
  it("holds on today's tree, every listed demo seeder still needed", () => {
    expect(checkOwner()).toEqual({ problems: [], stale: [] });
    for (const file of Object.keys(DEMO_SEEDERS as Record<string, string>)) expect(file).toMatch(/^lib\/demo\//);
  });

  it.each([
    [
      "a console release updating the table",
      "lib/auth/planted.ts",
      "await tx.$executeRawUnsafe(`UPDATE effects SET status = 'failed'`);",
    ],
    [
      "a schema-qualified delete",
      "lib/console/planted.ts",
      `await db.query("DELETE FROM onceboard.effects WHERE tenant_id = $1");`,
    ],
    [
      "an insert into a quoted partition",
      "lib/features/retention-and-gaps/planted.ts",
      `INSERT INTO "jobs"."effects_p20261201" (tenant_id) VALUES ($1)`,
    ],
    [
      "a copy of the claim's lock formula",
      "lib/auth/planted.ts",
      "const LOCK = `SELECT pg_advisory_xact_lock(hashtextextended($1::text || chr(1) || $2::text, 0))`;",
    ],
    ["a route's lowercase update", "app/api/v1/planted/route.ts", "update effects set lease_until = null"],
  ])("catch %s", (_what, file, source) => {
    expect(checkOwner({ files: { [file]: source } }).problems).toEqual([expect.objectContaining({ file, line: 1 })]);
  });

  it.each([
    ["the library itself", "lib/idempotency/planted.ts", "UPDATE onceboard.effects SET status = 'failed'"],
    ["a test's fixture", "lib/console/planted.test.ts", "INSERT INTO effects (tenant_id) VALUES ('t')"],
    ["a testing seeder", "lib/console/testing/seed-planted.ts", "INSERT INTO effects (tenant_id) VALUES ('t')"],
    ["a benchmark's seed", "bench/planted.ts", "INSERT INTO effects SELECT * FROM effects"],
    ["a read", "lib/console/planted.ts", "SELECT status FROM effects WHERE key = $1; UPDATE effects_daily_view SET x = 1"],
    [
      "another advisory lock",
      "lib/auth/planted.ts",
      "SELECT pg_advisory_xact_lock(hashtextextended('onceboard:bootstrap-admin', 0))",
    ],
  ])("allow %s", (_what, file, source) => {
    expect(checkOwner({ files: { [file]: source } }).problems).toEqual([]);
  });

  const scratch = path.join(os.tmpdir(), `onceboard-effects-owner-${process.pid}`);
  afterAll(() => fs.rm(scratch, { recursive: true, force: true }));

  it("reports a listed demo seeder that no longer writes the table", async () => {
    const tree = path.join(scratch, "seeder");
    await fs.mkdir(path.join(tree, "lib/demo"), { recursive: true });
    await fs.writeFile(path.join(tree, "lib/demo/history.ts"), "export const seeded = 0;\n");
    expect(checkOwner({ root: tree })).toEqual({ problems: [], stale: ["lib/demo/history.ts"] });
  });

  it("makes the lint command fail on a planted write", async () => {
    await fs.mkdir(path.join(scratch, "lib/auth"), { recursive: true });
    await fs.writeFile(path.join(scratch, "lib/auth/release.ts"), "export const SQL = `UPDATE effects SET status = 'failed'`;\n");
    const failure = await promisify(execFile)("node", [path.join(ROOT, "scripts/check-layers.mjs"), "--root", scratch]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("effects: lib/auth/release.ts:1 writes effects (UPDATE effects)");
  });
});
