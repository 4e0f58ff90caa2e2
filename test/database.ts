import pg from "pg";
import { inject } from "vitest";
import { consolePoolConfig } from "../lib/db/pool";
import { createScratchDatabase } from "../lib/db/scratch";
import { DEFAULT_SCHEMA } from "../lib/idempotency";

export interface TestDatabase {
  /** The database's plain URL, as a user gives it: no search_path. */
  url: string;
  name: string;
  /**
   * A pool on the test database configured as the console's pools are (consolePoolConfig: the
   * library's schema on the search_path, set by the pool, not the URL), for read models and the
   * tests' own SQL; closed by drop().
   */
  pool: pg.Pool;
  drop(): Promise<void>;
}

/**
 * A fresh database cloned from the migrated template: isolated per test file and fast
 * (CREATE DATABASE … TEMPLATE copies files, it does not re-run migrations).
 */
export async function createTestDatabase(options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const template = inject("templateDatabase");
  const templatePid = template.replace(/^onceboard_template_/, "");
  const scratch = await createScratchDatabase(inject("adminDatabaseUrl"), { prefix: `onceboard_t${templatePid}`, template });
  const pool = new pg.Pool(
    consolePoolConfig({
      connectionString: scratch.url,
      schema: DEFAULT_SCHEMA,
      statementTimeoutMs: null,
      max: options.poolSize ?? 10,
      application_name: "onceboard-test",
    }),
  );
  pool.on("error", () => {});
  return {
    url: scratch.url,
    name: scratch.name,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      await scratch.drop();
    },
  };
}
