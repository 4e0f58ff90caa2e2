import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

/** The cluster's superuser password: where it is kept, and rotating the one clusters had before it was random. */

/** The superuser's password, random per cluster, readable by the cluster's owner only (0600 in a 0700 directory). */
export const PASSWORD_FILE = "onceboard.password";
/** The console role's password (lib/db/roles.ts), random per cluster, kept like the superuser's. */
const CONSOLE_PASSWORD_FILE = "onceboard.console-password";
/** What clusters made before the password was random were given; rotated on their next start. */
export const LEGACY_PASSWORD = "onceboard";
/** The superuser password of a cluster this module made (clusters from before it was random: rotated at start). */
export async function readPassword(clusterDir: string): Promise<string | undefined> {
  return (await fs.readFile(path.join(clusterDir, PASSWORD_FILE), "utf8").catch(() => undefined))?.trim();
}

export async function rotateLegacyPassword(url: (password: string) => string, clusterDir: string): Promise<string> {
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
 * The console role's password in a cluster this module made: made at random on first use and kept
 * 0600 in the cluster's 0700 directory, so every start logs the console in with the same one.
 */
export async function consolePassword(clusterDir: string): Promise<string> {
  const file = path.join(clusterDir, CONSOLE_PASSWORD_FILE);
  const existing = (await fs.readFile(file, "utf8").catch(() => undefined))?.trim();
  if (existing) return existing;
  const password = randomBytes(24).toString("base64url");
  try {
    await fs.writeFile(file, password, { mode: 0o600, flag: "wx" });
    return password;
  } catch (error) {
    // Another process made it first: theirs is the one.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return (await fs.readFile(file, "utf8")).trim();
    throw error;
  }
}
