import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { loadConfig } from "../lib/config";
import { mariadbUrlFor } from "../lib/demo/shop";

/**
 * The MariaDB the demo's and the soak's MariaDB tests use: MARIADB_URL, else the machine's own
 * (lib/config.ts's default). Outside CI a MariaDB that does not answer skips those tests with a
 * loud notice; under CI=true it is an error: they are required (as for RabbitMQ and NATS,
 * lib/queues/testing/brokers.ts).
 */
export async function findTestMariadb(): Promise<string | null> {
  const url = loadConfig().MARIADB_URL;
  try {
    const connection = await mysql.createConnection({ uri: mariadbUrlFor(url, ""), connectTimeout: 3000 });
    await connection.end();
    return url;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (process.env.CI === "true") throw new Error(`MariaDB tests need MariaDB under CI: nothing answers at ${url} (${why})`);
    console.warn(
      `\n${"!".repeat(78)}\n!! MariaDB tests SKIPPED: nothing answers at ${url} (${why}).\n!! Start it (service mariadb start) or set MARIADB_URL; under CI=true they are required.\n${"!".repeat(78)}\n`,
    );
    return null;
  }
}

/** A database name of the test's own on the shared server (dropped with lib/db/scratch.ts's dropMysqlDatabase). */
export const testMariadbDatabaseName = (prefix: string): string => `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
