import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fsSync from "node:fs";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT_RUNTIME_DIR } from "../lib/db/embedded";
import { findFreePort } from "../lib/db/free-port";
import { isProcessAlive } from "../lib/db/process-alive";
import { createScratchDatabase } from "../lib/db/scratch";

const ROOT = path.resolve(import.meta.dirname, "..");
const execFileAsync = promisify(execFile);

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Runs `npm start`'s script with a controlled environment (no DATABASE_URL unless given); through
 * a real `npm start` when `npm` is set (then `child` is npm itself, as a process manager sees it).
 */
function runStart(
  env: Record<string, string | undefined>,
  args: string[] = [],
  options: { cwd?: string; npm?: boolean } = {},
): Started {
  const { DATABASE_URL: _ignored, ...base } = process.env;
  let output = "";
  const [command, argv] = options.npm
    ? ["npm", ["start", "--silent", "--", ...args]]
    : [process.execPath, ["--import", "tsx", "scripts/start.ts", ...args]];
  const child = spawn(command, argv, {
    cwd: options.cwd ?? ROOT,
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
    await sleep(200);
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

  it("names a data directory it cannot make", async () => {
    const file = path.join(os.tmpdir(), `onceboard-not-a-dir-${process.pid}`);
    await fs.writeFile(file, "");
    try {
      const run = runStart({ ONCEBOARD_DATA_DIR: path.join(file, "data"), PORT: String(await findFreePort()) }, ["--no-demo"]);
      expect(await run.exited).toBe(1);
      const lines = run.output().trim().split("\n");
      expect(lines).toEqual([expect.stringMatching(/^onceboard: cannot write .*run\.json \(ONCEBOARD_DATA_DIR\): ENOTDIR/)]);
      expect(run.output()).not.toMatch(/\n\s+at /);
    } finally {
      await fs.rm(file, { force: true });
    }
  });

  it("names a bad PORT", async () => {
    const run = runStart({ PORT: "http" });
    expect(await run.exited).not.toBe(0);
    expect(run.output()).toMatch(/onceboard: invalid configuration: PORT/);
  });

  it("names a bad --store, and refuses --history for the demo on MariaDB (its history would go to PostgreSQL)", async () => {
    const bad = runStart({}, ["--demo", "--store", "oracle"]);
    expect(await bad.exited).not.toBe(0);
    expect(bad.output()).toMatch(/--store must be postgres or mariadb \(got "oracle"\)/);
    const history = runStart({}, ["--demo", "--store", "mariadb", "--history", "14d"]);
    expect(await history.exited).not.toBe(0);
    expect(history.output()).toMatch(/--history backfills the demo's history in PostgreSQL; the demo on MariaDB/);
  });
});

// ---------------------------------------------------------------------------------------------
// Helpers for the runs that really start PostgreSQL and the console.

const isRoot = process.getuid?.() === 0;

/** The run's superuser password (random per cluster, in a 0600 file inside the cluster). */
async function clusterPassword(dataDir: string): Promise<string> {
  return (await fs.readFile(path.join(dataDir, "pg", "onceboard.password"), "utf8")).trim();
}

async function connectTo(dataDir: string, pgPort: string): Promise<pg.Client> {
  const password = encodeURIComponent(await clusterPassword(dataDir));
  const client = new pg.Client(`postgresql://postgres:${password}@127.0.0.1:${pgPort}/postgres`);
  await client.connect();
  return client;
}

/** Readable by a user who is neither the owner nor in the group: the file and every directory above it let "others" in. */
function readableByOthers(file: string): boolean {
  let mode: number;
  try {
    mode = fsSync.statSync(file).mode;
  } catch {
    return false;
  }
  if ((mode & 0o004) === 0) return false;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if ((fsSync.statSync(dir).mode & 0o001) === 0) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

/** Every regular file under `roots` (symlinks followed once, at the root) that others can read and that contains `secret`. */
function filesExposing(roots: string[], secret: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    let entries: fsSync.Dirent[];
    try {
      entries = fsSync.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && readableByOthers(full)) {
        try {
          if (fsSync.readFileSync(full).includes(secret)) found.push(full);
        } catch {
          // gone meanwhile
        }
      }
    }
  };
  for (const root of roots) walk(fsSync.existsSync(root) ? fsSync.realpathSync(root) : root);
  return found;
}

const pgPasswordFiles = () => fsSync.readdirSync(os.tmpdir()).filter((name) => name.startsWith("pg-password-"));

/** A non-loopback IPv4 address of this machine, to see whether the console is reachable from outside. */
function externalAddress(): string | undefined {
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return undefined;
}

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(5000) });
    return true;
  } catch {
    return false;
  }
}

/** Polls until `pids` are all gone or the deadline passes; returns those still alive. */
async function survivorsAfter(pids: number[], deadlineMs: number): Promise<number[]> {
  const deadline = Date.now() + deadlineMs;
  let alive = pids;
  while (Date.now() < deadline) {
    alive = pids.filter((pid) => isProcessAlive(pid));
    if (alive.length === 0) return [];
    await sleep(100);
  }
  return pids.filter((pid) => isProcessAlive(pid));
}

/** Everything a run started: its own pid, the children in run.json, the postmaster. */
async function processesOf(dataDir: string): Promise<{ owner: number; children: number[]; postmaster: number }> {
  const record = JSON.parse(await fs.readFile(path.join(dataDir, "run.json"), "utf8")) as {
    owner: number;
    children: { pid: number }[];
  };
  const postmaster = Number.parseInt((await fs.readFile(path.join(dataDir, "pg", "postmaster.pid"), "utf8")).split("\n")[0]!, 10);
  return { owner: record.owner, children: record.children.map((c) => c.pid), postmaster };
}

/** A cluster the run kept outside the data directory (root, unreachable checkout) is removed with it. */
async function removeDataDir(dataDir: string): Promise<void> {
  const link = path.join(dataDir, "pg");
  const stat = await fs.lstat(link).catch(() => undefined);
  // A process that was just killed may still be closing files in it: retry a non-empty directory.
  const options = { recursive: true, force: true, maxRetries: 5, retryDelay: 200 };
  if (stat?.isSymbolicLink()) await fs.rm(await fs.realpath(link), options);
  await fs.rm(dataDir, options);
}

/** Where a data directory's cluster lives as root (ROOT_RUNTIME_DIR/clusters/<id>), named as lib/db/embedded names it. */
function besideClusterDirs(dataDir: string): string[] {
  if (!fsSync.existsSync(dataDir)) return [];
  const id = createHash("sha256")
    .update(path.join(fsSync.realpathSync(dataDir), "pg"))
    .digest("hex")
    .slice(0, 16);
  return [path.join(ROOT_RUNTIME_DIR, "clusters", id)];
}

describe("npm start on the embedded PostgreSQL", () => {
  const dataDir = path.join(os.tmpdir(), `onceboard-start-${process.pid}`);
  const running: Started[] = [];
  afterAll(async () => {
    for (const run of running) if (run.child.exitCode === null) run.child.kill("SIGKILL");
    await removeDataDir(dataDir);
  });

  async function startAndQuery(
    sql: string,
    env: Record<string, string> = {},
  ): Promise<{ run: Started; rows: Record<string, unknown>[]; consolePort: number }> {
    const port = await findFreePort();
    const run = runStart({ ONCEBOARD_DATA_DIR: dataDir, PORT: String(port), ...env }, ["--no-demo"]);
    running.push(run);
    const [, pgPort] = await waitForOutput(run, /embedded PostgreSQL ready on 127\.0\.0\.1:(\d+)/, 60_000);
    await waitForOutput(run, /console ready at http:\/\/\S+:\d+/, 240_000);
    const health = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
    expect(health.status).toBe(200);
    const client = await connectTo(dataDir, pgPort!);
    const { rows } = await client.query(sql);
    await client.end();
    return { run, rows, consolePort: port };
  }

  it("comes up on an empty data directory, and a second start reuses the data", async () => {
    const tmpBefore = pgPasswordFiles();
    // Item 17: a malformed WORKER_METRICS_URLS is named once at startup and is the Workers panel's
    // error; the database-backed API still answers.
    // Every API route but health needs a token: plant one (hashed, as npm run token stores it).
    const secret = `ob_${randomBytes(32).toString("base64url")}`;
    const bearer = { authorization: `Bearer ${secret}` };
    const tokenHash = createHash("sha256").update(secret).digest("hex");
    const first = await startAndQuery(
      `WITH token AS (INSERT INTO onceboard.api_tokens (name, role, token_hash, prefix) VALUES ('start-test', 'viewer', '${tokenHash}', '${secret.slice(-6)}') RETURNING id)
       INSERT INTO onceboard.audit_log (actor, action, target) SELECT 'start-test', 'marker', 'first-start' FROM token RETURNING id`,
      { WORKER_METRICS_URLS: "http://127.0.0.1:9/metrics, 127.0.0.1:9464/metrics" },
    );
    const named = first.run
      .output()
      .split("\n")
      .filter((line) => line.includes("WORKER_METRICS_URLS"));
    expect(named).toEqual([
      'onceboard: warning: invalid configuration: WORKER_METRICS_URLS has an entry that is not an http(s) URL: "127.0.0.1:9464/metrics" (the Workers panel shows this until it is fixed)',
    ]);
    const workers = await fetch(`http://127.0.0.1:${first.consolePort}/api/v1/workers`, { headers: bearer });
    expect(workers.status).toBe(500);
    expect(((await workers.json()) as { error: { code: string } }).error.code).toBe("CONFIG_INVALID");
    const overview = await fetch(`http://127.0.0.1:${first.consolePort}/api/v1/overview`, { headers: bearer });
    expect(overview.status).toBe(200);

    // The README's next step: `npm run token -- create` (and the other command-line tools) work on
    // the running console's embedded database, not only with DATABASE_URL.
    const cli = (script: string, args: string[]) => {
      const { DATABASE_URL: _unset, ...env } = process.env;
      return execFileAsync(process.execPath, ["--import", "tsx", script, ...args], {
        cwd: ROOT,
        env: { ...env, ONCEBOARD_DATA_DIR: dataDir },
      });
    };
    const created = await cli("scripts/token.ts", ["create", "--tenant", "acme", "--role", "viewer"]);
    const made = created.stdout.trim().split("\n").at(-1) ?? "";
    expect(made).toMatch(/^ob_/);
    const withMade = await fetch(`http://127.0.0.1:${first.consolePort}/api/v1/effects?limit=1`, {
      headers: { authorization: `Bearer ${made}` },
    });
    expect(withMade.status).toBe(200);
    expect(((await withMade.json()) as { tenant: string }).tenant).toBe("acme");
    const listed = (await cli("scripts/token.ts", ["list"])).stdout;
    expect(listed).toContain("viewer    acme");
    // A login link names the running console's own port, not this shell's PORT default.
    const madeId =
      listed
        .split("\n")
        .find((line) => line.includes("viewer    acme"))
        ?.split(" ")[0] ?? "";
    const link = (await cli("scripts/token.ts", ["link", madeId])).stdout;
    expect(link).toContain(`:${first.consolePort}/login#code=`);
    const settings = await cli("scripts/retention.ts", ["settings", "set", "--retention-days", "9"]);
    expect(`${settings.stdout}${settings.stderr}`).toContain('"retentionDays":9');
    // A refusal names the setting in the way and the value it must reach (the retry window is 3 d).
    const refused = await cli("scripts/retention.ts", ["settings", "set", "--retention-days", "2"]).then(
      () => Promise.reject(new Error("--retention-days 2 was accepted below the 3 d retry window")),
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/RETENTION_INVALID/);
    expect(refused.stderr).toMatch(/--max-retry-window-days: lower it first to 2 or less \(now 3\)/);
    const plan = await cli("scripts/retention.ts", ["plan"]);
    expect(`${plan.stdout}${plan.stderr}`).toMatch(/effects_p\d{8}/);
    // The advisor exits 2 when it refuses to recommend (no gaps observed yet): an answer, not a failure.
    const advice = await cli("scripts/retention.ts", ["advise", "--json"]).catch((error: { code?: number; stdout?: string }) =>
      error.code === 2 ? { stdout: error.stdout ?? "" } : Promise.reject(error),
    );
    expect(JSON.parse(advice.stdout)).toHaveProperty("status");

    // The console logs in as its own role (lib/db/roles.ts), not as the owner, and the audit
    // chain it appended to holds.
    const pgPort = first.run.output().match(/embedded PostgreSQL ready on 127\.0\.0\.1:(\d+)/)?.[1] ?? "";
    const owner = await connectTo(dataDir, pgPort);
    const consoleRoles = await owner.query<{ role: string }>(
      "SELECT DISTINCT usename AS role FROM pg_stat_activity WHERE application_name = 'onceboard-console'",
    );
    await owner.end();
    expect(consoleRoles.rows).toEqual([{ role: "onceboard_console" }]);
    const verified = await cli("scripts/audit.ts", ["verify"]);
    expect(verified.stdout.trim().split("\n").at(-1)).toMatch(/^audit verify ok rows=\d+$/);
    expect(fsSync.statSync(path.join(dataDir, "pg", "onceboard.console-password")).mode & 0o077).toBe(0);

    // Item 18: loopback only by default.
    const external = externalAddress();
    if (external) expect(await answers(`http://${external}:${first.consolePort}/api/v1/health`)).toBe(false);
    else console.warn("start.test: no non-loopback IPv4 address on this machine; the listen-address check is skipped");
    expect(first.run.output()).not.toMatch(/HOST=/);

    // Item 15: no secret where another user can read it (nor the old /tmp/pg-password-* files).
    const password = await clusterPassword(dataDir);
    expect(pgPasswordFiles()).toEqual(tmpBefore);
    expect(fsSync.statSync(path.join(dataDir, "pg", "onceboard.password")).mode & 0o077).toBe(0);
    expect(filesExposing([dataDir, os.tmpdir()], password)).toEqual([]);

    first.run.child.kill("SIGTERM");
    expect(await first.run.exited, first.run.output().slice(-4000)).toBe(0);

    // Item 18: HOST exposes it; every route now needs a session or a token, so no "no authentication" warning.
    const second = await startAndQuery(`SELECT count(*)::int AS n FROM onceboard.audit_log WHERE target = 'first-start'`, {
      HOST: "0.0.0.0",
    });
    expect(second.rows[0]!.n).toBe(1);
    expect(second.run.output()).not.toMatch(/which has no authentication yet/);
    if (external) expect(await answers(`http://${external}:${second.consolePort}/api/v1/health`)).toBe(true);
    second.run.child.kill("SIGTERM");
    expect(await second.run.exited, second.run.output().slice(-4000)).toBe(0);
    expect(filesExposing([dataDir, os.tmpdir()], password)).toEqual([]);
  }, 600_000);

  it("recovers the server a killed run left behind", async () => {
    const killed = await startAndQuery(`SELECT 1 AS ok`);
    const { children } = await processesOf(dataDir);
    // Whoever read its output is gone too (the console inherited these pipes).
    killed.run.child.stdout?.destroy();
    killed.run.child.stderr?.destroy();
    killed.run.child.kill("SIGKILL"); // its postgres child lives on, holding postmaster.pid
    await killed.run.exited;
    // The console it spawned sees its parent gone and stops by itself (it used to run on unowned,
    // and with its stdout a closed pipe spun a core on failed writes until the next start).
    expect(children.length).toBeGreaterThan(0);
    expect(await survivorsAfter(children, 15_000)).toEqual([]);
    expect(await answers(`http://127.0.0.1:${killed.consolePort}/api/v1/health`)).toBe(false);
    const again = await startAndQuery(`SELECT count(*)::int AS n FROM onceboard.audit_log WHERE target = 'first-start'`);
    expect(again.rows[0]!.n).toBe(1);
    again.run.child.kill("SIGTERM");
    expect(await again.run.exited).toBe(0);
  }, 600_000);

  it("leaves no secret readable by others when killed while initdb runs", async () => {
    const fresh = path.join(os.tmpdir(), `onceboard-start-initdb-${process.pid}`);
    const tmpBefore = pgPasswordFiles();
    const run = runStart({ ONCEBOARD_DATA_DIR: fresh, PORT: String(await findFreePort()) }, ["--no-demo"]);
    running.push(run);
    try {
      // The password goes to initdb in a file inside a private directory beside the cluster; catch it there.
      // The cluster is fresh/pg, or (as root: the 0700 data directory is closed to the postgres user)
      // ROOT_RUNTIME_DIR/clusters/<id>, named as lib/db/embedded.ts names it.
      const besideCluster = (): Array<{ dir: string; prefix: string }> => [
        { dir: fresh, prefix: ".pg-initdb-" },
        ...besideClusterDirs(fresh).map((cluster) => ({
          dir: path.dirname(cluster),
          prefix: `.${path.basename(cluster)}-initdb-`,
        })),
      ];
      let handover: string | undefined;
      const deadline = Date.now() + 60_000;
      while (!handover && Date.now() < deadline && run.child.exitCode === null) {
        for (const { dir, prefix } of besideCluster()) {
          const name = (await fs.readdir(dir).catch(() => [] as string[])).find((e) => e.startsWith(prefix));
          if (name) handover = path.join(dir, name);
        }
        if (!handover) await sleep(5);
      }
      expect(handover, `no initdb password hand-over seen:\n${run.output()}`).toBeDefined();
      expect(fsSync.statSync(handover!).mode & 0o077).toBe(0);
      run.child.kill("SIGKILL");
      await run.exited;
      expect(pgPasswordFiles()).toEqual(tmpBefore);
      const leftovers = fsSync.existsSync(handover!) ? fsSync.readdirSync(handover!).map((f) => path.join(handover!, f)) : [];
      for (const file of leftovers) expect(readableByOthers(file)).toBe(false);
    } finally {
      // initdb, orphaned by the SIGKILL, is stopped too before its directory goes. As root its
      // command line names the cluster under ROOT_RUNTIME_DIR, not the data directory: look for both.
      const clusterDirs = besideClusterDirs(fresh);
      const orphans = () => [fresh, ...clusterDirs].flatMap((text) => processesNaming(text));
      for (const pid of orphans()) process.kill(pid, "SIGKILL");
      await survivorsAfter(orphans(), 10_000);
      await removeDataDir(fresh);
    }
  }, 120_000);
});

describe("npm start as process managers and terminals run it", () => {
  const dataDir = path.join(os.tmpdir(), `onceboard-start-npm-${process.pid}`);
  const running: Started[] = [];
  afterAll(async () => {
    for (const run of running) if (run.child.exitCode === null) run.child.kill("SIGKILL");
    await removeDataDir(dataDir);
  });

  it("stops the console, the demo workers and PostgreSQL within 10 s when npm's own pid gets SIGTERM", async () => {
    const port = await findFreePort();
    const run = runStart(
      { ONCEBOARD_DATA_DIR: dataDir, PORT: String(port), DEMO_WORKERS: "2", DEMO_RATE: "1" },
      ["--history", "off"],
      { npm: true },
    );
    running.push(run);
    await waitForOutput(run, /console ready at http:\/\/localhost:\d+/, 300_000);
    await waitForOutput(run, /demo: 2 workers/, 10_000);
    const started = await processesOf(dataDir);
    expect(started.owner).not.toBe(run.child.pid); // npm is not start.ts: the signal goes to npm
    expect(started.children.length).toBeGreaterThanOrEqual(4); // 2 workers, the producer, the console
    const everything = [started.owner, ...started.children, started.postmaster];
    expect(await survivorsAfter(everything, 0)).toEqual(everything);

    run.child.kill("SIGTERM");
    expect(await survivorsAfter(everything, 10_000)).toEqual([]);
    expect(await run.exited).toBe(0);
    expect(run.output()).not.toMatch(/starting it again/);
    expect(await answers(`http://127.0.0.1:${port}/api/v1/health`)).toBe(false);
  }, 600_000);
});

describe("npm start as root from a clone other users cannot enter (mode 0700)", () => {
  let home: string | undefined;
  let run: Started | undefined;
  afterAll(async () => {
    if (run && run.child.exitCode === null) run.child.kill("SIGKILL");
    if (home) {
      await removeDataDir(path.join(home, "app", ".onceboard"));
      await fs.rm(home, { recursive: true, force: true });
    }
  });

  it.skipIf(!isRoot)(
    "runs PostgreSQL as the postgres user anyway, and stops on SIGINT to npm",
    async () => {
      home = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-clone-"));
      expect(fsSync.statSync(home).mode & 0o777).toBe(0o700);
      const app = path.join(home, "app");
      // The tracked files and the generated Prisma client, as a clone plus `npm install` would have them.
      const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
      for (const file of [...files, ...listFiles("lib/db/generated")]) {
        if (!fsSync.existsSync(path.join(ROOT, file))) continue;
        await fs.mkdir(path.dirname(path.join(app, file)), { recursive: true });
        await fs.copyFile(path.join(ROOT, file), path.join(app, file));
      }
      // node_modules as hard links (same files, inside the 0700 directory); a console build if one exists.
      execFileSync("cp", ["-al", path.join(ROOT, "node_modules"), path.join(app, "node_modules")]);
      if (fsSync.existsSync(path.join(ROOT, ".next", "BUILD_ID"))) {
        execFileSync("sh", [
          "-c",
          'mkdir "$2" && cd "$1" && tar --exclude=./cache -cf - . | (cd "$2" && tar -xf -)',
          "sh",
          path.join(ROOT, ".next"),
          path.join(app, ".next"),
        ]);
      }
      const tmpBefore = pgPasswordFiles();
      const port = await findFreePort();
      run = runStart({ PORT: String(port), ONCEBOARD_DATA_DIR: "" }, ["--no-demo"], { cwd: app, npm: true });
      const [, pgPort] = await waitForOutput(run, /embedded PostgreSQL ready on 127\.0\.0\.1:(\d+)/, 180_000);
      await waitForOutput(run, /console ready at http:\/\/localhost:\d+/, 300_000);
      expect(run.output()).not.toMatch(/\n\s+at /);
      const dataDir = path.join(app, ".onceboard");
      const client = await connectTo(dataDir, pgPort!);
      const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM onceboard._prisma_migrations");
      expect(rows[0]!.n).toBeGreaterThan(0);
      await client.end();
      expect((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).status).toBe(200);
      // The clone stays closed to others: nothing was opened up to let postgres in.
      expect(fsSync.statSync(home).mode & 0o777).toBe(0o700);
      const password = await clusterPassword(dataDir);
      expect(pgPasswordFiles()).toEqual(tmpBefore);
      expect(filesExposing([home, path.join(dataDir, "pg"), os.tmpdir()], password)).toEqual([]);

      const started = await processesOf(dataDir);
      const everything = [started.owner, ...started.children, started.postmaster];
      run.child.kill("SIGINT");
      expect(await survivorsAfter(everything, 10_000)).toEqual([]);
      expect(await run.exited).toBe(0);
    },
    900_000,
  );
});

function listFiles(dir: string): string[] {
  const full = path.join(ROOT, dir);
  if (!fsSync.existsSync(full)) return [];
  return fsSync
    .readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

/** Processes whose command line contains `text` (e.g. an initdb working on a directory). */
function processesNaming(text: string): number[] {
  const pids: number[] = [];
  for (const entry of fsSync.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fsSync.readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

describe("npm start on the user's own database (DATABASE_URL)", () => {
  const adminUrl = process.env.DATABASE_URL;
  const dataDir = path.join(os.tmpdir(), `onceboard-start-own-${process.pid}`);
  const running: Started[] = [];
  afterAll(async () => {
    for (const run of running) if (run.child.exitCode === null) run.child.kill("SIGKILL");
    await removeDataDir(dataDir);
  });

  it.skipIf(!adminUrl)(
    "runs no demo and writes no demo data unless --demo is given, and prints the login line last",
    async () => {
      const scratch = await createScratchDatabase(adminUrl!, { prefix: "onceboard_start_own" });
      try {
        const port = await findFreePort();
        const run = runStart({ DATABASE_URL: scratch.url, ONCEBOARD_DATA_DIR: dataDir, PORT: String(port) });
        running.push(run);
        await waitForOutput(run, /console ready at http:\/\/\S+:\d+/, 300_000);
        await waitForOutput(run, /Sign in once with this link/, 30_000);
        // Give a demo, were one started, time to say so and to write its first rows.
        await sleep(3000);
        const lines = run.output().trim().split("\n");
        expect(lines.at(-1)).toMatch(/Sign in once with this link .*\/login#code=/);
        expect(run.output()).toMatch(new RegExp(`console logs \\(JSON lines\\) in ${path.join(dataDir, "logs", "console.log")}`));
        // The line above is not enough: the console's output goes through the JSON-line splitter into
        // that file (opened at start, readable by its owner only), so no JSON line reaches the terminal.
        const consoleLog = await fs.stat(path.join(dataDir, "logs", "console.log"));
        expect(consoleLog.mode & 0o777).toBe(0o600);
        expect(run.output()).not.toMatch(/^\{/m);
        expect(run.output()).not.toMatch(/demo: \d+ workers|backfilling/);
        const client = new pg.Client({ connectionString: scratch.url });
        await client.connect();
        try {
          const { rows } = await client.query<{ nspname: string }>(
            "SELECT nspname FROM pg_namespace WHERE nspname IN ('onceboard_demo', 'pgboss_demo')",
          );
          expect(rows).toEqual([]);
          const effects = await client.query<{ n: string }>("SELECT count(*) AS n FROM onceboard.effects");
          expect(Number(effects.rows[0]?.n)).toBe(0);
        } finally {
          await client.end();
        }
        run.child.kill("SIGTERM");
        expect(await run.exited).toBe(0);
      } finally {
        await scratch.drop();
      }
    },
    600_000,
  );

  it.skipIf(!adminUrl)(
    "prints the login link again once the history backfill's lines have scrolled it away",
    async () => {
      const scratch = await createScratchDatabase(adminUrl!, { prefix: "onceboard_start_relink" });
      try {
        const port = await findFreePort();
        const run = runStart({ DATABASE_URL: scratch.url, ONCEBOARD_DATA_DIR: dataDir, PORT: String(port) }, ["--history", "6h"]);
        running.push(run);
        await waitForOutput(run, /history ready: [\d,]+ effects?/, 300_000);
        await waitForOutput(run, /history ready[\s\S]*Sign in once with this link/, 30_000);
        const lines = run.output().trim().split("\n");
        const links = lines.flatMap((line, i) => (/Sign in once with this link .*\/login#code=/.test(line) ? [i] : []));
        const backfilling = lines.findIndex((line) => line.includes("backfilling"));
        const ready = lines.findIndex((line) => line.includes("history ready"));
        // Once before the backfill's progress lines, once after them, and the same link both times.
        expect(links).toHaveLength(2);
        expect(links[0]!).toBeLessThan(backfilling);
        expect(links[1]!).toBeGreaterThan(ready);
        expect(lines[links[1]!]).toBe(lines[links[0]!]);
        run.child.kill("SIGTERM");
        expect(await run.exited).toBe(0);
      } finally {
        await scratch.drop();
      }
    },
    600_000,
  );
});
