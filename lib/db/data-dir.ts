import fs from "node:fs";

/**
 * ONCEBOARD_DATA_DIR holds the session secret, the embedded cluster's password and logs that name
 * tenants: only its owner may enter it. Made 0700, and an existing one (an older start made it
 * 0755) is brought back to 0700; mkdir's mode alone would leave that one as it was.
 */
export function ensurePrivateDataDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((fs.statSync(dir).mode & 0o777) !== 0o700) fs.chmodSync(dir, 0o700);
}
