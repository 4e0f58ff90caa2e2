import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { withDatabase } from "./global-setup";

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
  const adminUrl = inject("adminDatabaseUrl");
  const template = inject("templateDatabase");
  const templatePid = template.replace(/^onceboard_template_/, "");
  const name = `onceboard_t${templatePid}_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
  pool.on("error", () => {});
  return {
    url,
    name,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      const dropper = new pg.Client(adminUrl);
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
