import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../lib/db/embedded";
import { migrate } from "../lib/db/migrate";
import { ensureEffectPartitions } from "../lib/db/partitions";

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set, otherwise an embedded server in a
 * throw-away directory. A migrated template database is made once; each test file clones it.
 */
export default async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  let stopServer = async () => {};
  if (!adminUrl) {
    const handle = await startEmbeddedPostgres({
      dataDir: path.join(os.tmpdir(), `onceboard-test-pg-${process.pid}`),
      persistent: false,
    });
    adminUrl = handle.url;
    stopServer = () => handle.stop();
  }
  const templateName = `onceboard_template_${process.pid}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${templateName}`);
  await admin.query(`CREATE DATABASE ${templateName}`);
  const templateUrl = withDatabase(adminUrl, templateName);
  await migrate(templateUrl);
  const client = new pg.Client(templateUrl);
  await client.connect();
  await ensureEffectPartitions(client, { back: 2, ahead: 7 });
  await client.end();

  project.provide("adminDatabaseUrl", adminUrl);
  project.provide("templateDatabase", templateName);
  process.env.ONCEBOARD_TEST_ADMIN_URL = adminUrl;
  process.env.ONCEBOARD_TEST_TEMPLATE = templateName;

  return async () => {
    // Test files drop their own databases; sweep any a crashed file left behind.
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [
      `onceboard_t${process.pid}_%`,
    ]);
    for (const row of rows) await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`).catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${templateName} WITH (FORCE)`).catch(() => {});
    await admin.end();
    await stopServer();
  };
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}
