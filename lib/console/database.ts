import { getPool } from "../db/pool";
import type { StatementQueryable } from "../db/types";
import { ConsoleError, translateDatabaseError } from "./errors";

/**
 * The console's database handle: the process-wide pool (with statement_timeout), wrapped so that
 * an unreachable server or a timeout becomes a ConsoleError the API can answer with 503/504.
 */
export function consoleDatabase(): StatementQueryable {
  let pool: ReturnType<typeof getPool>;
  try {
    pool = getPool();
  } catch (error) {
    throw new ConsoleError("DATABASE_NOT_CONFIGURED", error instanceof Error ? error.message : String(error), { cause: error });
  }
  return {
    async query(statement, values) {
      try {
        return await pool.query(statement, values);
      } catch (error) {
        throw translateDatabaseError(error);
      }
    },
  };
}
