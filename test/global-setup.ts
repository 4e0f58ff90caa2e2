import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../lib/db/embedded";
import { migrateConsole } from "../lib/db/migrate";
import { ensureEffectPartitions } from "../lib/db/partitions";
import { EMBEDDED_CONSOLE_ROLE, ensureConsoleRole, grantConsoleRole } from "../lib/db/roles";
import { createScratchDatabase, dropDatabase } from "../lib/db/scratch";
import { installDemoSchema } from "../lib/demo/schema";

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set, otherwise an embedded server in a
 * throw-away directory. A migrated template database is made once; each test file clones it.
 */
interface SharedDatabase {
  adminUrl: string;
  templateName: string;
  consoleRolePassword: string;
  users: number;
  teardown: () => Promise<void>;
}

declare global {
  var __onceboardTestDatabase: Promise<SharedDatabase> | undefined;
}

/**
 * Vitest runs this once per project (fast, slow) in one process: they share one server and one
 * template, made by the first call and torn down by the last, or the second would stop the first's.
 */
export default async function setup(project: TestProject) {
  globalThis.__onceboardTestDatabase ??= prepare();
  const shared = await globalThis.__onceboardTestDatabase;
  shared.users += 1;
  project.provide("adminDatabaseUrl", shared.adminUrl);
  project.provide("templateDatabase", shared.templateName);
  project.provide("consoleRolePassword", shared.consoleRolePassword);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    globalThis.__onceboardTestDatabase = undefined;
    await shared.teardown();
  };
}

async function prepare(): Promise<SharedDatabase> {
  let adminUrl = process.env.DATABASE_URL;
  let stopServer = async () => {};
  if (!adminUrl) {
    const handle = await startEmbeddedPostgres({
      dataDir: path.join(os.tmpdir(), `onceboard-test-pg-${process.pid}`),
      persistent: false,
    });
    adminUrl = handle.url;
    stopServer = async () => {
      await handle.stop();
    };
  }
  const templateName = `onceboard_template_${process.pid}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  const templateUrl = (await createScratchDatabase(adminUrl, { name: templateName })).url;
  await migrateConsole(templateUrl);
  const client = new pg.Client(templateUrl);
  await client.connect();
  await ensureEffectPartitions(client, { back: 2, ahead: 7 });
  // As the demo does when it starts: tests of the demo and the test kit's examples use its tables.
  await installDemoSchema(client);
  // The console's role, as `npm start` makes it: every clone of the template has its grants.
  // Roles are the server's, not the database's: runs sharing a server share the role, and the
  // password is only checked where the server asks for one (the embedded server).
  const consoleRolePassword = randomBytes(18).toString("base64url");
  await ensureConsoleRole(admin, EMBEDDED_CONSOLE_ROLE, consoleRolePassword);
  await grantConsoleRole(client, EMBEDDED_CONSOLE_ROLE);
  await client.end();

  process.env.ONCEBOARD_TEST_ADMIN_URL = adminUrl;
  process.env.ONCEBOARD_TEST_TEMPLATE = templateName;

  const teardown = async () => {
    // Test files drop their own databases; sweep any a crashed file left behind.
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [
      `onceboard_t${process.pid}_%`,
    ]);
    for (const name of [...rows.map((row) => row.datname), templateName]) await dropDatabase(adminUrl, name).catch(() => {});
    await admin.end();
    await stopServer();
  };
  return { adminUrl, templateName, consoleRolePassword, users: 0, teardown };
}

export { withDatabase } from "../lib/db/scratch";

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    consoleRolePassword: string;
  }
}
