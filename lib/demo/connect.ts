import fs from "node:fs";
import path from "node:path";
import { loadConfig } from "../config";
import { isProcessAlive } from "../db/process-alive";
import { type ProvisionedDatabase, provisionDatabase } from "../db/provision";

/**
 * The database a demo command works on: DATABASE_URL when set; else the embedded server that a
 * running `npm start` owns (found through its postmaster.pid, which names the port); else the
 * embedded server started here for the duration of the command.
 */
export async function openDemoDatabase(log: (line: string) => void): Promise<ProvisionedDatabase> {
  const config = loadConfig();
  if (!config.DATABASE_URL) {
    const pidFile = path.join(config.ONCEBOARD_DATA_DIR, "pg", "postmaster.pid");
    let lines: string[] = [];
    try {
      lines = fs.readFileSync(pidFile, "utf8").split("\n");
    } catch {
      // not running
    }
    const pid = Number.parseInt(lines[0] ?? "", 10);
    const port = Number.parseInt(lines[3] ?? "", 10);
    if (isProcessAlive(pid) && Number.isInteger(port) && port > 0) {
      return { url: `postgresql://postgres:onceboard@127.0.0.1:${port}/postgres`, embedded: true, stop: async () => {} };
    }
  }
  return provisionDatabase({ log });
}
