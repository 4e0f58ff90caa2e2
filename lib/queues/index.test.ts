import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const BROKERS = ["bullmq", "ioredis", "pg-boss", "amqplib", "nats"];

/**
 * Imports `file` in a fresh node (TypeScript through tsx) whose module resolution throws for each
 * package in `refused`, as a missing optional peer dependency would. Returns the exported names,
 * or the error.
 */
function importRefusing(file: string, refused: string[]): { ok: true; exports: string[] } | { ok: false; stderr: string } {
  const hooks = `export async function resolve(specifier, context, next) {
    const refused = ${JSON.stringify(refused)};
    if (refused.some((m) => specifier === m || specifier.startsWith(m + "/"))) {
      throw new Error("refused to load " + specifier);
    }
    return next(specifier, context);
  }`;
  const register = `import { register } from "node:module";
    register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  const child = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--import",
      `data:text/javascript,${encodeURIComponent(register)}`,
      "--input-type=module",
      "-e",
      `const m = await import(${JSON.stringify(pathToFileURL(path.join(root, file)).href)});
       process.stdout.write(JSON.stringify(Object.keys(m).sort()));`,
    ],
    { cwd: root, encoding: "utf8", timeout: 60_000 },
  );
  if (child.status !== 0) return { ok: false, stderr: `${child.stderr}${child.error ? String(child.error) : ""}` };
  return { ok: true, exports: JSON.parse(child.stdout) as string[] };
}

/** The relative modules a source file imports (type-only imports included). */
function localImports(file: string): string[] {
  const source = readFileSync(path.join(root, file), "utf8");
  return [...source.matchAll(/\bfrom\s+["'](\.[^"']*)["']/g)].map((m) => m[1] as string);
}

describe("lib/queues entry points (brokers are optional peer dependencies)", () => {
  it("lib/queues/index.ts loads with no broker package resolvable, and exports nothing broker-specific", () => {
    const result = importRefusing("lib/queues/index.ts", BROKERS);
    expect(result).toMatchObject({ ok: true });
    const names = result.ok ? result.exports : [];
    expect(names).toEqual(expect.arrayContaining(["createDeliveryHandler", "decide", "processBatch", "processDelivery"]));
    for (const brokerOnly of [
      "startBoss",
      "workIdempotent",
      "createIdempotentWorker",
      "redisConnection",
      "consumeIdempotent",
      "assertTopology",
      "assertJetStream",
      "natsConnection",
    ]) {
      expect(names).not.toContain(brokerOnly);
    }
  }, 120_000);

  it("the refusal is real: each broker's entry point fails without its own package and loads without the other's", () => {
    // Negative controls: the same harness does stop a broker import.
    const bullWithout = importRefusing("lib/queues/bullmq.ts", ["bullmq"]);
    expect(bullWithout.ok).toBe(false);
    expect(bullWithout.ok ? "" : bullWithout.stderr).toMatch(/refused to load bullmq/);
    const bossWithout = importRefusing("lib/queues/pgboss.ts", ["pg-boss"]);
    expect(bossWithout.ok).toBe(false);
    expect(bossWithout.ok ? "" : bossWithout.stderr).toMatch(/refused to load pg-boss/);
    const rabbitWithout = importRefusing("lib/queues/rabbitmq.ts", ["amqplib"]);
    expect(rabbitWithout.ok ? "" : rabbitWithout.stderr).toMatch(/refused to load amqplib/);
    const natsWithout = importRefusing("lib/queues/nats.ts", ["nats"]);
    expect(natsWithout.ok ? "" : natsWithout.stderr).toMatch(/refused to load nats/);
    // Each subpath stands alone.
    expect(importRefusing("lib/queues/pgboss.ts", ["bullmq", "ioredis"])).toMatchObject({ ok: true });
    expect(importRefusing("lib/queues/bullmq.ts", ["pg-boss"])).toMatchObject({ ok: true });
    expect(importRefusing("lib/queues/rabbitmq.ts", ["pg-boss", "bullmq", "ioredis", "nats"])).toMatchObject({ ok: true });
    expect(importRefusing("lib/queues/nats.ts", ["pg-boss", "bullmq", "ioredis", "amqplib"])).toMatchObject({ ok: true });
  }, 240_000);

  it("no adapter imports another broker's adapter, not even its types", () => {
    const adapters = ["./pgboss", "./bullmq", "./rabbitmq", "./nats"];
    for (const adapter of adapters) {
      const others = adapters.filter((a) => a !== adapter);
      expect(localImports(`lib/queues/${adapter.slice(2)}.ts`).filter((m) => others.includes(m))).toEqual([]);
    }
    for (const shared of ["lib/queues/deliveries.ts", "lib/queues/generic.ts", "lib/queues/index.ts"]) {
      expect(localImports(shared).filter((m) => adapters.includes(m))).toEqual([]);
    }
  });
});
