import { setTimeout as sleep } from "node:timers/promises";
import { type MysqlHandle, runMysql } from "./mysql";

/**
 * One-at-a-time on MySQL and MariaDB without GET_LOCK: a GET_LOCK lock belongs to the session,
 * survives COMMIT, passes to the next borrower of a pooled connection when not released, and Galera
 * refuses it. A lease is a row of `<schema>.leases`: taken by an UPDATE that only matches a free or
 * expired lease (or one the holder already has), then read back: held when the holder read back is
 * this one. A holder that dies loses it when `until` passes; a live holder renews it.
 * migrate() (one installer at a time) and maintain() (one runner) take theirs here.
 */

/** The leases table: made by migrate() before any migration, as the migrations table is (it serves migrate's own lease). */
export const LEASES_TABLE = `CREATE TABLE IF NOT EXISTS onceboard.leases (
  name VARCHAR(255) NOT NULL,
  holder VARCHAR(255) NULL,
  until DATETIME(3) NOT NULL DEFAULT '2000-01-01 00:00:00',
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`;

const ENSURE = "INSERT INTO onceboard.leases (name) VALUES (?) ON DUPLICATE KEY UPDATE name = name";
const TAKE = `UPDATE onceboard.leases SET holder = ?, until = UTC_TIMESTAMP(3) + INTERVAL ? SECOND
 WHERE name = ? AND (holder IS NULL OR holder = ? OR until < UTC_TIMESTAMP(3))`;
const HOLDER = "SELECT holder FROM onceboard.leases WHERE name = ?";
const RELEASE = "UPDATE onceboard.leases SET holder = NULL, until = '2000-01-01 00:00:00' WHERE name = ? AND holder = ?";

export interface Lease {
  /** Gives it up (no-op when it expired and another took it). */
  release(): Promise<void>;
}

/**
 * Takes the lease `name` for `holder`, for `ttlSeconds`, renewed every third of it while held.
 * `waitMs`: how long to keep trying while another holds it (0: try once). Null when not taken.
 */
export async function takeLease(
  db: MysqlHandle,
  schema: string,
  name: string,
  holder: string,
  options: { ttlSeconds: number; waitMs: number },
): Promise<Lease | null> {
  await runMysql(db, ENSURE, [name], schema);
  const deadline = Date.now() + options.waitMs;
  for (let attempt = 0; ; attempt++) {
    await runMysql(db, TAKE, [holder, options.ttlSeconds, name, holder], schema);
    const [rows] = await runMysql(db, HOLDER, [name], schema);
    if ((rows as { holder: string | null }[])[0]?.holder === holder) break;
    if (Date.now() >= deadline) return null;
    await sleep(Math.min(1000, 50 * 2 ** Math.min(attempt, 4)) * (0.5 + Math.random()), undefined, { ref: false });
  }
  const renew = setInterval(
    () => void runMysql(db, TAKE, [holder, options.ttlSeconds, name, holder], schema).catch(() => {}),
    (options.ttlSeconds * 1000) / 3,
  );
  renew.unref?.();
  return {
    async release() {
      clearInterval(renew);
      await runMysql(db, RELEASE, [name, holder], schema);
    },
  };
}
