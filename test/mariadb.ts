import { randomBytes } from "node:crypto";
import { loadConfig } from "../lib/config";
import { mariadbUrlFor } from "../lib/demo/shop";
import { probeMariadb } from "./mariadb-probe";

/**
 * The MariaDB the demo's and the soak's MariaDB tests use: MARIADB_URL, else the machine's own
 * (lib/config.ts's default), as probeMariadb finds it.
 */
export async function findTestMariadb(): Promise<string | null> {
  const url = loadConfig().MARIADB_URL;
  return probeMariadb(url, mariadbUrlFor(url, ""));
}

/** A database name of the test's own on the shared server (dropped with lib/db/scratch.ts's dropMysqlDatabase). */
export const testMariadbDatabaseName = (prefix: string): string => `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
