import fs from "node:fs";
import path from "node:path";
import type { Queryable } from "./db-types";

/** The demo's own schema: its tables never enter the production migration chain. */
export const DEMO_SCHEMA = "onceboard_demo";

const DEMO_SCHEMA_SQL = path.join(import.meta.dirname, "schema.sql");

/**
 * Installs the demo's tables (idempotent, serialised by an advisory lock so two demo processes
 * starting together do not race on CREATE … IF NOT EXISTS). Called when the demo starts.
 */
export async function installDemoSchema(db: Queryable): Promise<void> {
  const sql = fs.readFileSync(DEMO_SCHEMA_SQL, "utf8");
  await db.query(`SELECT pg_advisory_lock(hashtextextended('onceboard:demo-schema', 0))`);
  try {
    await db.query(sql);
  } finally {
    await db.query(`SELECT pg_advisory_unlock(hashtextextended('onceboard:demo-schema', 0))`);
  }
}
