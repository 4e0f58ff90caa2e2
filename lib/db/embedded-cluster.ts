import { createHash } from "node:crypto";
import { existsSync, lstatSync, realpathSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureRuntimeDir, type RunAs, userCan } from "./embedded-binaries";
import { EmbeddedPostgresError, OWNER_FILE, ROOT_RUNTIME_DIR } from "./embedded-shared";
import { isProcessAlive } from "./process-alive";

/** Where a cluster lives (as root, possibly moved where the `postgres` user can reach it), and recovering a server its owner left running. */

/**
 * Where the cluster's files live. Normally `dataDir` itself. As root, when the `postgres` user
 * cannot reach the directory that holds `dataDir`, the cluster is kept under ROOT_RUNTIME_DIR and
 * `dataDir` becomes a symbolic link to it (so `.onceboard/pg` still names it); a cluster already in
 * `dataDir` is moved there.
 */
export async function resolveClusterDir(dataDir: string, user: RunAs | undefined): Promise<string> {
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
export async function recoverStaleServer(clusterDir: string): Promise<void> {
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
