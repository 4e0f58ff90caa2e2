import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Binaries, RunAs } from "./embedded-binaries";
import { PASSWORD_FILE } from "./embedded-password";
import { EmbeddedPostgresError } from "./embedded-shared";

/** initdb, starting and stopping the server. */

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
export async function initialise(binaries: Binaries, clusterDir: string, user: RunAs | undefined, onLog: (line: string) => void) {
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
export function startServer(
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

/**
 * How a server stopped: "fast" wrote all of its WAL first; "immediate" (SIGQUIT, after the fast
 * shutdown ran past its allowance) did not, so the next start runs crash recovery and a commit
 * acknowledged under `synchronous_commit = off` may be gone; "not running" had exited already.
 */
export type ShutdownMode = "fast" | "immediate" | "not running";

/** The fast shutdown's default allowance before the immediate one. */
const FAST_SHUTDOWN_MS = 8000;

export async function stopServer(child: ChildProcess, fastShutdownMs = FAST_SHUTDOWN_MS): Promise<ShutdownMode> {
  if (child.exitCode !== null || child.signalCode !== null) return "not running";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let mode: ShutdownMode = "fast";
  child.kill("SIGINT"); // fast shutdown: sessions are cut, the cluster is left consistent
  const timer = setTimeout(() => {
    mode = "immediate";
    child.kill("SIGQUIT");
  }, fastShutdownMs);
  await exited;
  clearTimeout(timer);
  return mode;
}
