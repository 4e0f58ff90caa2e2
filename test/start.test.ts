import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { findFreePort } from "../lib/db/free-port";

const ROOT = path.resolve(import.meta.dirname, "..");

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs `npm start`'s script with a controlled environment (no DATABASE_URL unless given). */
function runStart(env: Record<string, string | undefined>, args: string[] = []): Started {
  const { DATABASE_URL: _ignored, ...base } = process.env;
  let output = "";
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", ...args], {
    cwd: ROOT,
    env: { ...base, ...env } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr!.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitForOutput(started: Started, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = started.output().match(pattern);
    if (match) return match;
    if (started.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`expected ${pattern} in start output:\n${started.output()}`);
}

describe("npm start: bad input stops startup with one clear line", () => {
  it("names a malformed DATABASE_URL", async () => {
    const run = runStart({ DATABASE_URL: "mysql:/nope", PORT: String(await findFreePort()) });
    expect(await run.exited).not.toBe(0);
    expect(run.output().trim()).toMatch(/^onceboard: invalid configuration: DATABASE_URL must be a URL like postgresql:/);
    expect(run.output()).not.toMatch(/\n\s+at /);
  });

  it("names an unreachable database", async () => {
    const closedPort = await findFreePort();
    const run = runStart({
      DATABASE_URL: `postgresql://postgres@127.0.0.1:${closedPort}/postgres`,
      PORT: String(await findFreePort()),
    });
    expect(await run.exited).not.toBe(0);
    expect(run.output()).toMatch(
      /onceboard: cannot reach PostgreSQL at postgresql:\/\/postgres@127\.0\.0\.1:\d+\/postgres: connection refused/,
    );
    expect(run.output()).not.toMatch(/\n\s+at /);
  });

  it("names a port already in use", async () => {
    const blocker = net.createServer();
    const port = await findFreePort();
    await new Promise<void>((resolve) => blocker.listen(port, resolve));
    try {
      const run = runStart({ PORT: String(port) });
      expect(await run.exited).not.toBe(0);
      expect(run.output()).toMatch(new RegExp(`onceboard: port ${port} is already in use`));
    } finally {
      blocker.close();
    }
  });

  it("names a bad PORT", async () => {
    const run = runStart({ PORT: "http" });
    expect(await run.exited).not.toBe(0);
    expect(run.output()).toMatch(/onceboard: invalid configuration: PORT/);
  });
});

describe("npm start on the embedded PostgreSQL", () => {
  const dataDir = path.join(os.tmpdir(), `onceboard-start-${process.pid}`);
  const running: Started[] = [];
  afterAll(async () => {
    for (const run of running) if (run.child.exitCode === null) run.child.kill("SIGKILL");
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  async function leftoverConsoleAnswers(port: number): Promise<boolean> {
    try {
      await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      return true;
    } catch {
      return false;
    }
  }

  async function startAndQuery(sql: string): Promise<{ run: Started; rows: Record<string, unknown>[]; consolePort: number }> {
    const port = await findFreePort();
    const run = runStart({ ONCEBOARD_DATA_DIR: dataDir, PORT: String(port), ONCEBOARD_DEMO: "off" }, ["--no-demo"]);
    running.push(run);
    const [, pgPort] = await waitForOutput(run, /embedded PostgreSQL ready on 127\.0\.0\.1:(\d+)/, 60_000);
    await waitForOutput(run, /console ready at http:\/\/localhost:\d+/, 240_000);
    const health = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
    expect(health.status).toBe(200);
    const client = new pg.Client(`postgresql://postgres:onceboard@127.0.0.1:${pgPort}/postgres`);
    await client.connect();
    const { rows } = await client.query(sql);
    await client.end();
    return { run, rows, consolePort: port };
  }

  it("comes up on an empty data directory, and a second start reuses the data", async () => {
    const first = await startAndQuery(
      `INSERT INTO audit_log (actor, action, target) VALUES ('start-test', 'marker', 'first-start') RETURNING id`,
    );
    first.run.child.kill("SIGTERM");
    expect(await first.run.exited).toBe(0);

    const second = await startAndQuery(`SELECT count(*)::int AS n FROM audit_log WHERE target = 'first-start'`);
    expect(second.rows[0]!.n).toBe(1);
    second.run.child.kill("SIGTERM");
    expect(await second.run.exited).toBe(0);
  }, 600_000);

  it("recovers the server a killed run left behind", async () => {
    const killed = await startAndQuery(`SELECT 1 AS ok`);
    killed.run.child.kill("SIGKILL"); // its postgres child lives on, holding postmaster.pid
    await killed.run.exited;
    expect(await leftoverConsoleAnswers(killed.consolePort)).toBe(true);
    const again = await startAndQuery(`SELECT count(*)::int AS n FROM audit_log WHERE target = 'first-start'`);
    expect(again.rows[0]!.n).toBe(1);
    // The new start shut down the console the killed run left listening.
    expect(await leftoverConsoleAnswers(killed.consolePort)).toBe(false);
    again.run.child.kill("SIGTERM");
    expect(await again.run.exited).toBe(0);
  }, 600_000);
});
