import { loadConfig } from "../lib/config";
import { withSearchPath } from "../lib/db/pool";
import { openDatabase, type ProvisionedDatabase } from "../lib/db/provision";
import { DEMO_SCHEMA } from "../lib/demo/schema";

/** The database a demo command works on (openDatabase), with the demo's tables on the search path. */
export async function openDemoDatabase(log: (line: string) => void): Promise<ProvisionedDatabase> {
  const config = loadConfig();
  // Demo commands name the demo's tables unqualified too (the later search_path wins).
  const db = await openDatabase({ log });
  return { ...db, url: withSearchPath(db.url, [config.ONCEBOARD_SCHEMA, DEMO_SCHEMA]) };
}
