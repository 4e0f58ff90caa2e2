import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { redactUrl } from "../db/errors";
import { dropMysqlDatabase } from "../db/scratch";
import { mariadbUrlFor, prepareMariadbShop } from "../demo/shop";
import type { OutageReport } from "./database";
import { type OutageProxy, startOutageProxy } from "./outage-proxy";

/**
 * How long the simulated MariaDB restart refuses connections: about as long as the PostgreSQL
 * soak's restart of its own server is down (a fast shutdown, a second, a start).
 */
export const MARIADB_OUTAGE_DOWN_MS = 3000;

/** The soak's effects store on MariaDB (`--store mariadb`): a scratch database and user on MARIADB_URL's server. */
export interface SoakMariadb {
  /** The soak user's URL of the scratch database, through the outage proxy: what workers and the supervisor use. */
  url: string;
  describe: string;
  /** The server's VERSION(). */
  version: string;
  outage(): Promise<OutageReport>;
  close(options: { keep: boolean }): Promise<string | undefined>;
}

/**
 * A scratch database on `serverUrl`'s MariaDB (the machine's, shared with other users: never
 * restarted), the worker library migrated into it and the shop's tables made, a user of the soak's
 * own that may use only that database, and the outage proxy in front of the server. Every
 * connection of the soak to MariaDB is that user's, through the proxy. The outage, since the soak
 * must not restart a server others use: the proxy cuts every connection it carries and refuses new
 * ones for MARIADB_OUTAGE_DOWN_MS, and every server session of the soak's user still open is ended
 * with KILL CONNECTION, so that none outlives the "restart" on the server's side either (only that
 * user's: nobody else's session is touched).
 */
export async function openSoakMariadb(serverUrl: string, log: (line: string) => void): Promise<SoakMariadb> {
  const suffix = `${process.pid}_${randomBytes(3).toString("hex")}`;
  const database = `onceboard_soak_${suffix}`;
  const user = `ob_soak_${suffix}`;
  const password = randomBytes(12).toString("hex");
  const admin = await mysql.createConnection({ uri: mariadbUrlFor(serverUrl, "") });
  let proxy: OutageProxy | undefined;
  const drop = async () => {
    await dropMysqlDatabase(mariadbUrlFor(serverUrl, ""), database);
    await admin.query("DROP USER IF EXISTS ?@'%'", [user]);
  };
  try {
    const [versionRows] = await admin.query("SELECT VERSION() AS v");
    const version = String((versionRows as { v: string }[])[0]?.v ?? "unknown");
    await prepareMariadbShop(mariadbUrlFor(serverUrl, database));
    await admin.query("CREATE USER ?@'%' IDENTIFIED BY ?", [user, password]);
    await admin.query(`GRANT ALL PRIVILEGES ON \`${database}\`.* TO ?@'%'`, [user]);
    log(`created database ${database} and user ${user} on ${redactUrl(serverUrl)} (MariaDB ${version})`);
    const server = new URL(serverUrl);
    proxy = await startOutageProxy({ host: server.hostname, port: Number(server.port || 3306) });
    const own = new URL(mariadbUrlFor(serverUrl, database));
    own.username = user;
    own.password = password;
    const url = proxy.urlFor(own.toString());
    const p = proxy;
    return {
      url,
      version,
      describe: `MariaDB ${version}: database ${database} on ${redactUrl(serverUrl)} (MARIADB_URL), reached through the outage proxy on 127.0.0.1:${p.port}`,
      async outage() {
        const started = Date.now();
        // Both at once: the proxy's cut and refusal, and the server's sessions of the soak's user killed.
        const [cut, killed] = await Promise.all([p.outage(MARIADB_OUTAGE_DOWN_MS), killSessionsOf(admin, user)]);
        const downMs = Date.now() - started;
        return {
          kind: "cut",
          downMs,
          connectionsCut: cut.cut,
          detail: `MariaDB is the machine's shared server, so the soak does not restart it: simulated the restart by cutting all ${cut.cut} connections through the outage proxy, refusing ${cut.refused} new ones for ${(downMs / 1000).toFixed(1)} s, and ending the ${killed} server sessions of user ${user} still open with KILL CONNECTION`,
        };
      },
      async close({ keep }) {
        await p.close().catch(() => {});
        try {
          if (keep) return `kept MariaDB database ${database} (user ${user})`;
          await drop();
          return undefined;
        } finally {
          await admin.end().catch(() => {});
        }
      },
    };
  } catch (error) {
    await proxy?.close().catch(() => {});
    await drop().catch(() => {});
    await admin.end().catch(() => {});
    throw error;
  }
}

/** KILL CONNECTION of every server session of `user` (others' sessions are never touched); how many. */
async function killSessionsOf(admin: mysql.Connection, user: string): Promise<number> {
  const [rows] = await admin.query("SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ?", [user]);
  let killed = 0;
  for (const { id } of rows as { id: number }[]) {
    // A session that ended meanwhile is "unknown thread id" (1094): nothing left to end.
    await admin.query(`KILL CONNECTION ${Number(id)}`).then(
      () => killed++,
      () => {},
    );
  }
  return killed;
}
