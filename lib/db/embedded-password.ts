import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

/** The cluster's superuser password: where it is kept, and rotating the one clusters had before it was random. */

/** The superuser's password, random per cluster, readable by the cluster's owner only (0600 in a 0700 directory). */
export const PASSWORD_FILE = "onceboard.password";
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
