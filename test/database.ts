import pg from "pg";
import { inject } from "vitest";
import { EMBEDDED_CONSOLE_ROLE, urlAsRole } from "../lib/db/roles";
import { createScratchDatabase } from "../lib/db/scratch";

export interface TestDatabase {
  url: string;
  /** The same database as the console role logs in (lib/db/roles.ts), as production's console does. */
  consoleUrl: string;
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
    consoleUrl: urlAsRole(scratch.url, EMBEDDED_CONSOLE_ROLE, inject("consoleRolePassword")),
    name: scratch.name,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      await scratch.drop();
    },
  };
}
