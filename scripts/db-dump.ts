import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { loadConfig } from "../lib/config";
import { startEmbeddedPostgres } from "../lib/db/embedded";
import { migrateConsole } from "../lib/db/migrate";
import { searchPathOption } from "../lib/db/pool";
import { dumpSchema } from "../lib/db/schema-dump";
import { createScratchDatabase } from "../lib/db/scratch";
import { DEFAULT_SCHEMA } from "../lib/idempotency";

/**
 * npm run db:dump — migrates a scratch database (on DATABASE_URL's server when set, else an
 * embedded PostgreSQL in a temp directory) and writes the resulting schema to prisma/schema.sql.
 */
export const SCHEMA_DUMP_FILE = path.resolve(import.meta.dirname, "../prisma/schema.sql");

async function main() {
  let adminUrl = loadConfig().DATABASE_URL;
  let stop = async () => {};
  if (!adminUrl) {
    const handle = await startEmbeddedPostgres({
      dataDir: path.join(os.tmpdir(), `onceboard-dump-${process.pid}`),
      persistent: false,
    });
    adminUrl = handle.url;
    stop = async () => {
      await handle.stop();
    };
  }
  const scratch = await createScratchDatabase(adminUrl, { prefix: "onceboard_dump" });
  try {
    await migrateConsole(scratch.url);
    // The dump names objects relative to the search_path: the console's, as the dump test reads it.
    const client = new pg.Client({ connectionString: scratch.url, options: searchPathOption(DEFAULT_SCHEMA) });
    await client.connect();
    try {
      await fs.writeFile(SCHEMA_DUMP_FILE, await dumpSchema(client));
    } finally {
      await client.end();
    }
    console.log(`wrote ${path.relative(process.cwd(), SCHEMA_DUMP_FILE)}`);
  } finally {
    await scratch.drop().catch(() => {});
    await stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
