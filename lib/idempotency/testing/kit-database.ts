import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { EffectsDb } from "../db";
import { createMysqlPool, isMysqlUrl, runMysql } from "../mysql";
import { DEFAULT_SCHEMA } from "../schema";

/**
 * What the test kit does to the handler's database, on either engine: a pool per delivery whose
 * connections it can kill as a dying worker's would drop, a control pool for setup/observe and the
 * cleanup of the effect rows its deliveries made. PostgreSQL for a postgres:// URL, MySQL and
 * MariaDB for a mysql:// (or mariadb://) one.
 */

/** One delivery's pool: the handler's and its effects' connections. */
export interface DeliveryPool {
  readonly pool: EffectsDb;
  /** Opens one connection, so that concurrent deliveries really start together. */
  warm(): Promise<void>;
  /** The database side of the process dying: its connections drop, open transactions roll back. */
  kill(): Promise<void>;
  end(): Promise<void>;
}

export interface KitDatabase {
  /** The pool setup() and observe() get. */
  readonly control: EffectsDb;
  deliveryPool(max: number): Promise<DeliveryPool>;
  /** Deletes the effect rows of these keys of one tenant (the kit's own, between scenarios). */
  forgetEffects(tenant: string, keys: readonly string[], schema: string | undefined): Promise<void>;
  end(): Promise<void>;
}

/** Waits until the killed connections are gone, as `count` tells (up to 5 s). */
async function untilGone(count: () => Promise<number>): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if ((await count()) === 0) return;
    await sleep(20);
  }
}

function postgresKit(url: string): KitDatabase {
  const control = new pg.Pool({ connectionString: url, max: 2 });
  control.on("error", () => {});
  return {
    control,
    async deliveryPool(max) {
      const pool = new pg.Pool({ connectionString: url, max });
      const clients = new Set<pg.PoolClient>();
      pool.on("error", () => {});
      pool.on("connect", (client) => {
        // A checked-out client has no error listener of its own; a killed connection must not throw.
        client.on("error", () => {});
        clients.add(client);
      });
      // A removed client's backend is gone; its pid may be reused by someone else's connection.
      pool.on("remove", (client) => clients.delete(client));
      return {
        pool,
        warm: async () => (await pool.connect()).release(),
        async kill() {
          const pids = [...clients]
            .map((c) => (c as unknown as { processID?: number }).processID)
            .filter((pid): pid is number => typeof pid === "number");
          if (pids.length === 0) return;
          await control.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [pids]);
          await untilGone(async () => {
            const { rows } = await control.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1::int[])",
              [pids],
            );
            return rows[0]?.n ?? 0;
          });
        },
        end: () => pool.end(),
      };
    },
    async forgetEffects(tenant, keys) {
      await control.query("DELETE FROM effects WHERE tenant_id = $1 AND key = ANY($2::text[])", [tenant, [...keys]]);
    },
    end: () => control.end(),
  };
}

async function mysqlKit(url: string): Promise<KitDatabase> {
  const control = await createMysqlPool(url, 2);
  return {
    control,
    async deliveryPool(max) {
      const pool = await createMysqlPool(url, max);
      const ids = new Set<number>();
      // Each connection's server-side id, to KILL it as a dying worker's connection would drop.
      (
        pool.pool as unknown as {
          on(event: string, fn: (c: { threadId: number | null; on: (e: string, f: () => void) => void }) => void): void;
        }
      ).on("connection", (connection) => {
        const id = connection.threadId;
        if (id === null) return;
        ids.add(id);
        connection.on("error", () => {});
        connection.on("end", () => ids.delete(id));
      });
      return {
        pool,
        warm: async () => (await pool.getConnection()).release(),
        async kill() {
          const killed = [...ids];
          if (killed.length === 0) return;
          for (const id of killed) await control.query(`KILL CONNECTION ${Number(id)}`).catch(() => {});
          await untilGone(async () => {
            const [rows] = await control.query(
              `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID IN (${killed.map(() => "?").join(", ")})`,
              killed,
            );
            return Number((rows as { n: number }[])[0]?.n ?? 0);
          });
        },
        end: () => pool.end(),
      };
    },
    async forgetEffects(tenant, keys, schema) {
      if (keys.length === 0) return;
      await runMysql(
        control,
        `DELETE FROM onceboard.effects WHERE tenant_id = ? AND \`key\` IN (${keys.map(() => "?").join(", ")})`,
        [tenant, ...keys],
        schema ?? DEFAULT_SCHEMA,
      );
    },
    end: () => control.end(),
  };
}

/** The kit's database for `url`: PostgreSQL, or MySQL / MariaDB for a mysql:// or mariadb:// URL. */
export async function kitDatabase(url: string): Promise<KitDatabase> {
  return isMysqlUrl(url) ? mysqlKit(url) : postgresKit(url);
}
