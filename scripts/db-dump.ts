import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../lib/db/embedded";
import { migrate } from "../lib/db/migrate";
import { dumpSchema } from "../lib/db/schema-dump";

/**
 * npm run db:dump — migrates a scratch database (on DATABASE_URL's server when set, else an
 * embedded PostgreSQL in a temp directory) and writes the resulting schema to prisma/schema.sql.
 */
export const SCHEMA_DUMP_FILE = path.resolve(import.meta.dirname, "../prisma/schema.sql");

async function main() {
  let adminUrl = process.env.DATABASE_URL;
  let stop = async () => {};
  if (!adminUrl) {
    const handle = await startEmbeddedPostgres({
      dataDir: path.join(os.tmpdir(), `onceboard-dump-${process.pid}`),
      persistent: false,
    });
    adminUrl = handle.url;
    stop = () => handle.stop();
  }
  const name = `onceboard_dump_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    await migrate(url.toString());
    const client = new pg.Client(url.toString());
    await client.connect();
    try {
      await fs.writeFile(SCHEMA_DUMP_FILE, await dumpSchema(client));
    } finally {
      await client.end();
    }
    console.log(`wrote ${path.relative(process.cwd(), SCHEMA_DUMP_FILE)}`);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    await stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
