import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, realpathSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { assertClusterVersion } from "./embedded-version";
import { findFreePort } from "./free-port";
import { isProcessAlive } from "./process-alive";

export interface EmbeddedPostgresHandle {
  url: string;
  port: number;
  /** The directory asked for (it may be a symbolic link to `clusterDir`, see below). */
  dataDir: string;
  /** Where the cluster's files really are. */
  clusterDir: string;
  stop(): Promise<void>;
}

interface Options {
  /** Cluster directory; kept across restarts unless `persistent` is false. */
  dataDir: string;
  persistent?: boolean;
  /** A fixed port (e.g. to restart a server where clients expect it); a free one by default. */
  port?: number;
  onLog?: (line: string) => void;
}

const OWNER_FILE = "onceboard.owner";
/** The superuser's password, random per cluster, readable by the cluster's owner only (0600 in a 0700 directory). */
const PASSWORD_FILE = "onceboard.password";
/** What clusters made before the password was random were given; rotated on their next start. */
const LEGACY_PASSWORD = "onceboard";
/**
 * Only as root: where the PostgreSQL binaries are copied and clusters are kept when the `postgres`
 * user cannot reach the checkout (a clone under /root or in a `mktemp -d` directory, mode 0700).
 * Root-owned and not writable by anyone else; each cluster in it is the `postgres` user's, 0700.
 */
export const ROOT_RUNTIME_DIR = "/var/lib/onceboard";

/** One line, whatever failed: an EmbeddedPostgresError's message is what the user sees. */
export class EmbeddedPostgresError extends Error {
  readonly code = "EMBEDDED_POSTGRES";
}

interface RunAs {
  uid: number;
  gid: number;
}

interface Binaries {
  initdb: string;
  postgres: string;
  /** bin/, lib/, share/ of the platform package. */
  nativeDir: string;
  version: string;
}

async function findBinaries(): Promise<Binaries> {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let exported: { postgres: string; initdb: string };
  try {
    exported = (await import(name)) as { postgres: string; initdb: string };
  } catch {
    throw new EmbeddedPostgresError(
      `no PostgreSQL binaries for ${process.platform}-${process.arch} (${name} is not installed): set DATABASE_URL to an existing server`,
    );
  }
  const nativeDir = path.resolve(path.dirname(exported.postgres), "..");
  const manifest = JSON.parse(await fs.readFile(path.join(nativeDir, "..", "package.json"), "utf8")) as { version: string };
  return { initdb: exported.initdb, postgres: exported.postgres, nativeDir, version: manifest.version };
}

/** As root, PostgreSQL runs as the `postgres` system user (made here when missing, as embedded-postgres does). */
function postgresUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const ids = () => ({
    uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })),
    gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })),
  });
  try {
    return ids();
  } catch {
    try {
      execFileSync("groupadd", ["--system", "postgres"], { stdio: "ignore" });
      execFileSync("useradd", ["--system", "-g", "postgres", "--no-create-home", "-s", "/usr/sbin/nologin", "postgres"], {
        stdio: "ignore",
      });
      return ids();
    } catch {
      throw new EmbeddedPostgresError(
        "PostgreSQL cannot run as root and there is no `postgres` user, nor could one be made (groupadd/useradd failed): create one or run as another user",
      );
    }
  }
}

/** Whether `user` may search (`-x`) or read (`-r`) `target`, asked of the kernel as that user (ACLs included). */
function userCan(user: RunAs, test: "-x" | "-r", target: string): boolean {
  const result = spawnSync("/bin/sh", ["-c", `test ${test} "$1"`, "sh", target], {
    uid: user.uid,
    gid: user.gid,
    stdio: "ignore",
  });
  return result.status === 0;
}

async function ensureRuntimeDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  const stat = await fs.stat(dir);
  // Binaries that will run as `postgres` are taken from here: nobody but root may change them.
  if (stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new EmbeddedPostgresError(`${dir} must be owned by root and writable by root only (it holds the PostgreSQL binaries)`);
  }
  await fs.chmod(dir, 0o755);
}

/** Makes every directory 0755 and every file world-readable (executables stay executable); symlinks untouched. */
async function openUp(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await openUp(full);
    else if (entry.isFile()) await fs.chmod(full, (await fs.stat(full)).mode & 0o100 ? 0o755 : 0o644);
  }
}

/**
 * The binaries as the `postgres` user can run them: in place when it can reach them, else a copy
 * (made once per version) under ROOT_RUNTIME_DIR. The checkout itself is never opened up.
 */
async function reachableBinaries(binaries: Binaries, user: RunAs | undefined): Promise<Binaries> {
  if (!user || (userCan(user, "-x", binaries.initdb) && userCan(user, "-x", binaries.postgres))) return binaries;
  await ensureRuntimeDir(ROOT_RUNTIME_DIR);
  const target = path.join(ROOT_RUNTIME_DIR, `postgresql-${binaries.version}-${process.platform}-${process.arch}`);
  if (!existsSync(target)) {
    const staging = `${target}.partial-${process.pid}-${randomBytes(4).toString("hex")}`;
    try {
      await fs.cp(binaries.nativeDir, staging, { recursive: true, verbatimSymlinks: true });
      await openUp(staging);
      await fs.rename(staging, target).catch((error: NodeJS.ErrnoException) => {
        // Another start won the race: its copy is complete (rename is atomic), ours is not needed.
        if (!existsSync(target)) throw error;
      });
    } finally {
      await fs.rm(staging, { recursive: true, force: true });
    }
  }
  const copied = {
    ...binaries,
    nativeDir: target,
    initdb: path.join(target, path.relative(binaries.nativeDir, binaries.initdb)),
    postgres: path.join(target, path.relative(binaries.nativeDir, binaries.postgres)),
  };
  if (!userCan(user, "-x", copied.postgres)) {
    throw new EmbeddedPostgresError(
      `the postgres user cannot run ${copied.postgres}: check the permissions of ${ROOT_RUNTIME_DIR}`,
    );
  }
  return copied;
}

/**
 * Where the cluster's files live. Normally `dataDir` itself. As root, when the `postgres` user
 * cannot reach the directory that holds `dataDir`, the cluster is kept under ROOT_RUNTIME_DIR and
 * `dataDir` becomes a symbolic link to it (so `.onceboard/pg` still names it); a cluster already in
 * `dataDir` is moved there.
 */
async function resolveClusterDir(dataDir: string, user: RunAs | undefined): Promise<string> {
  await fs.mkdir(path.dirname(dataDir), { recursive: true });
  const link = lstatSync(dataDir, { throwIfNoEntry: false });
  if (link?.isSymbolicLink()) return realpathSync(dataDir);
  if (!user || userCan(user, "-x", path.dirname(dataDir))) return dataDir;
  const clusters = path.join(ROOT_RUNTIME_DIR, "clusters");
  await ensureRuntimeDir(ROOT_RUNTIME_DIR);
  await ensureRuntimeDir(clusters);
  const id = createHash("sha256")
    .update(path.join(realpathSync(path.dirname(dataDir)), path.basename(dataDir)))
    .digest("hex");
  const clusterDir = path.join(clusters, id.slice(0, 16));
  if (link?.isDirectory()) {
    if (existsSync(path.join(dataDir, "PG_VERSION")) && !existsSync(clusterDir)) await fs.rename(dataDir, clusterDir);
    else await fs.rm(dataDir, { recursive: true, force: true });
  }
  await fs.symlink(clusterDir, dataDir);
  return clusterDir;
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isProcessAlive(pid)) return true;
    await sleep(100);
  }
  return !isProcessAlive(pid);
}

/**
 * A run killed with SIGKILL leaves its postgres child running and postmaster.pid in place.
 * We record which Node process owns the cluster; when that owner is gone the orphaned server is
 * shut down so this run can start it again. A live owner means another Onceboard is using the
 * directory, which we refuse rather than share.
 */
async function recoverStaleServer(clusterDir: string): Promise<void> {
  const pidFile = path.join(clusterDir, "postmaster.pid");
  const postmasterPid = Number.parseInt((await fs.readFile(pidFile, "utf8").catch(() => "")).split("\n")[0] ?? "", 10);
  if (!isProcessAlive(postmasterPid)) return; // postgres itself clears a lock whose pid is gone
  const ownerPid = Number.parseInt(await fs.readFile(path.join(clusterDir, OWNER_FILE), "utf8").catch(() => ""), 10);
  if (ownerPid !== process.pid && isProcessAlive(ownerPid)) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL in ${clusterDir} is in use by another Onceboard process (pid ${ownerPid}); stop it first or set ONCEBOARD_DATA_DIR`,
    );
  }
  process.kill(postmasterPid, "SIGINT");
  if (!(await waitForExit(postmasterPid, 15_000))) {
    process.kill(postmasterPid, "SIGKILL");
    await waitForExit(postmasterPid, 5_000);
  }
}

/** Runs a binary to completion (in `cwd`, which the user must reach); rejects with its last stderr line. */
function run(file: string, args: string[], cwd: string, user: RunAs | undefined, onLog: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      ...user,
      cwd,
      env: { ...process.env, LC_MESSAGES: "C" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stdout.on("data", (chunk) => onLog(String(chunk).trimEnd()));
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      onLog(String(chunk).trimEnd());
    });
    child.on("error", (error) => reject(new EmbeddedPostgresError(`cannot run ${file}: ${error.message}`)));
    child.on("close", (code, signal) => {
      if (code === 0) return resolve();
      const last = stderr.trim().split("\n").filter(Boolean).pop() ?? "";
      reject(new EmbeddedPostgresError(`${path.basename(file)} failed (${signal ?? `exit ${code}`})${last ? `: ${last}` : ""}`));
    });
  });
}

/** initdb with a random superuser password, handed over in a 0600 file inside a 0700 directory that is removed at once. */
async function initialise(binaries: Binaries, clusterDir: string, user: RunAs | undefined, onLog: (line: string) => void) {
  await fs.rm(clusterDir, { recursive: true, force: true });
  await fs.mkdir(clusterDir, { mode: 0o700 });
  if (user) await fs.chown(clusterDir, user.uid, user.gid);
  const password = randomBytes(24).toString("base64url");
  const handover = await fs.mkdtemp(path.join(path.dirname(clusterDir), `.${path.basename(clusterDir)}-initdb-`));
  try {
    const pwfile = path.join(handover, "pwfile");
    await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600, flag: "wx" });
    if (user) {
      await fs.chown(handover, user.uid, user.gid);
      await fs.chown(pwfile, user.uid, user.gid);
    }
    await run(
      binaries.initdb,
      [
        `--pgdata=${clusterDir}`,
        "--auth=scram-sha-256",
        "--username=postgres",
        `--pwfile=${pwfile}`,
        "--encoding=UTF8",
        "--lc-messages=C",
        "--no-instructions",
      ],
      path.dirname(clusterDir),
      user,
      onLog,
    );
  } finally {
    await fs.rm(handover, { recursive: true, force: true });
  }
  await fs.writeFile(path.join(clusterDir, PASSWORD_FILE), password, { mode: 0o600 });
}

/** Starts `postgres` and resolves once it accepts connections. */
function startServer(
  binaries: Binaries,
  clusterDir: string,
  port: number,
  user: RunAs | undefined,
  onLog: (line: string) => void,
) {
  return new Promise<ChildProcess>((resolve, reject) => {
    const child = spawn(
      binaries.postgres,
      [
        "-D",
        clusterDir,
        "-p",
        String(port),
        // Loopback TCP only: no Unix socket directory that may not exist on this machine.
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
        "-c",
        "max_connections=300",
      ],
      // cwd: a directory the server's user can reach (the checkout may not be).
      { ...user, cwd: path.dirname(clusterDir), env: { ...process.env, LC_MESSAGES: "C" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let tail = "";
    let ready = false;
    const onOutput = (chunk: Buffer) => {
      const text = String(chunk);
      onLog(text.trimEnd()); // always drained: a full pipe would stall the server
      if (ready) return;
      tail = (tail + text).slice(-4000);
      if (tail.includes("database system is ready to accept connections")) {
        ready = true;
        resolve(child);
      }
    };
    child.stdout.on("data", onOutput);
    child.stderr.on("data", onOutput);
    child.on("error", (error) => reject(new EmbeddedPostgresError(`cannot run ${binaries.postgres}: ${error.message}`)));
    child.on("exit", (code, signal) => {
      if (ready) return;
      const last =
        tail
          .trim()
          .split("\n")
          .filter((line) => /FATAL|ERROR|PANIC/.test(line))
          .pop() ?? tail.trim().split("\n").pop();
      reject(
        new EmbeddedPostgresError(
          `postgres exited (${signal ?? `exit ${code}`}) before it was ready${last ? `: ${last.trim()}` : ""}`,
        ),
      );
    });
  });
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGINT"); // fast shutdown: sessions are cut, the cluster is left consistent
  const timer = setTimeout(() => child.kill("SIGQUIT"), 8000);
  await exited;
  clearTimeout(timer);
}

/** The superuser password of a cluster this module made (clusters from before it was random: rotated at start). */
async function readPassword(clusterDir: string): Promise<string | undefined> {
  return (await fs.readFile(path.join(clusterDir, PASSWORD_FILE), "utf8").catch(() => undefined))?.trim();
}

async function rotateLegacyPassword(url: (password: string) => string, clusterDir: string): Promise<string> {
  const { default: pg } = await import("pg");
  const password = randomBytes(24).toString("base64url");
  const client = new pg.Client(url(LEGACY_PASSWORD));
  await client.connect();
  try {
    await client.query(`ALTER ROLE postgres PASSWORD ${client.escapeLiteral(password)}`);
  } finally {
    await client.end().catch(() => {});
  }
  await fs.writeFile(path.join(clusterDir, PASSWORD_FILE), password, { mode: 0o600 });
  return password;
}

/**
 * The URL of the embedded server that a running `npm start` owns in `dataDir` (found through its
 * postmaster.pid, which names the port), or undefined when none runs there.
 */
export async function runningEmbeddedUrl(dataDir: string): Promise<string | undefined> {
  const lines = (await fs.readFile(path.join(dataDir, "postmaster.pid"), "utf8").catch(() => "")).split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!isProcessAlive(pid) || !Number.isInteger(port) || port <= 0) return undefined;
  const password = (await readPassword(dataDir)) ?? LEGACY_PASSWORD;
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

/**
 * Starts a real PostgreSQL with the binaries of the embedded-postgres package on a free loopback
 * port. As root it runs as the `postgres` user, with the binaries and the cluster where that user
 * can reach them. Every failure is an EmbeddedPostgresError with a one-line message.
 */
export async function startEmbeddedPostgres(options: Options): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(options.dataDir);
  const log = options.onLog ?? (() => {});
  let clusterDir = dataDir;
  let server: ChildProcess | undefined;
  try {
    const port = options.port ?? (await findFreePort());
    const user = postgresUser();
    const binaries = await reachableBinaries(await findBinaries(), user);
    clusterDir = await resolveClusterDir(dataDir, user);
    if (existsSync(path.join(clusterDir, "PG_VERSION"))) {
      await assertClusterVersion(clusterDir);
      await recoverStaleServer(clusterDir);
    } else await initialise(binaries, clusterDir, user, log);
    server = await startServer(binaries, clusterDir, port, user, log);
    await fs.writeFile(path.join(clusterDir, OWNER_FILE), String(process.pid));
    const url = (password: string) => `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    const password = (await readPassword(clusterDir)) ?? (await rotateLegacyPassword(url, clusterDir));

    let stopped = false;
    const running = server;
    // A process that exits without stop() (process.exit on an error path) still asks the server
    // for its fast shutdown, as embedded-postgres's exit hook did; signals are the caller's to handle.
    const onExit = () => running.kill("SIGINT");
    process.once("exit", onExit);
    return {
      url: url(password),
      port,
      dataDir,
      clusterDir,
      async stop() {
        if (stopped) return;
        stopped = true;
        process.off("exit", onExit);
        await stopServer(running);
        await fs.rm(path.join(clusterDir, OWNER_FILE), { force: true });
        if (options.persistent === false) {
          await fs.rm(clusterDir, { recursive: true, force: true });
          await fs.rm(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    if (server) await stopServer(server).catch(() => {});
    if (error instanceof EmbeddedPostgresError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL in ${clusterDir} did not start: ${message.split("\n")[0]} (set LOG_LEVEL=debug to see its log)`,
      { cause: error },
    );
  }
}
