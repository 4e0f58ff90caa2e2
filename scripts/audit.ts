import pg from "pg";
import { verifyAuditChain } from "../lib/auth/audit-chain";
import { loadConfig } from "../lib/config";
import { openDatabase } from "../lib/db/provision";
import { runMain } from "./cli";

const USAGE = `usage:
  npm run audit -- verify     recompute the audit log's hash chain; exit 1 at the first row changed, removed or out of order`;

/** `npm run audit`: checks on the audit log, on DATABASE_URL, else the embedded database of `npm start` (openDatabase). */
runMain(async () => {
  const [command, ...rest] = process.argv.slice(2);
  if (command !== "verify" || rest.length > 0) throw new Error(USAGE);
  const db = await openDatabase();
  const client = new pg.Client({ connectionString: db.url, application_name: "onceboard-audit-cli" });
  try {
    await client.connect();
    const report = await verifyAuditChain(client, { schema: loadConfig().ONCEBOARD_SCHEMA });
    if (!report.ok) {
      process.stdout.write(`audit verify FAILED after ${report.rows} intact rows: ${report.problem?.message}\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`audit verify ok rows=${report.rows}\n`);
  } finally {
    await client.end().catch(() => {});
    await db.stop();
  }
});
