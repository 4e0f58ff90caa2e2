import { consoleDatabase } from "../../console/database";
import type { Queryable } from "../../db/types";
import type { Health } from "./health-contract";

/** Whether the console can answer at all: one round trip to PostgreSQL. Throws ConsoleError when not. */
export async function checkHealth(db: Queryable = consoleDatabase()): Promise<Health> {
  const started = performance.now();
  await db.query("SELECT 1");
  return { ok: true, database: { latencyMs: Math.round((performance.now() - started) * 10) / 10 } };
}
