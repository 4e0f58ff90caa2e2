import pg from "pg";
import { inject } from "vitest";
import { createScratchDatabase } from "../lib/db/scratch";

export interface TestDatabase {
  url: string;
  name: string;
  /** A pool on the test database; closed by drop(). */
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
  const pool = new pg.Pool({ connectionString: scratch.url, max: options.poolSize ?? 10 });
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
