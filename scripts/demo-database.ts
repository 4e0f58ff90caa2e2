import path from "node:path";
import { loadConfig } from "../lib/config";
import { runningEmbeddedUrl } from "../lib/db/embedded";
import { withSearchPath } from "../lib/db/pool";
import { type ProvisionedDatabase, provisionDatabase } from "../lib/db/provision";
import { DEMO_SCHEMA } from "../lib/demo/schema";

/**
 * The database a demo command works on: DATABASE_URL when set; else the embedded server that a
 * running `npm start` owns (found through its postmaster.pid, which names the port); else the
 * embedded server started here for the duration of the command.
 */
export async function openDemoDatabase(log: (line: string) => void): Promise<ProvisionedDatabase> {
  const config = loadConfig();
  // Demo commands name the demo's tables and the library's unqualified.
  const demoUrl = (url: string) => withSearchPath(url, [config.ONCEBOARD_SCHEMA, DEMO_SCHEMA]);
  if (!config.DATABASE_URL) {
    const url = await runningEmbeddedUrl(path.join(config.ONCEBOARD_DATA_DIR, "pg"));
    if (url) return { url: demoUrl(url), embedded: true, stop: async () => {} };
  }
  const db = await provisionDatabase({ log });
  return { ...db, url: demoUrl(db.url) };
}
