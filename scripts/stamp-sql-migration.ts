import path from "node:path";
import { parseArgs } from "node:util";
import { stampMigration } from "./sql-sources";

/**
 * npm run db:stamp -- <name> [--timestamp YYYYMMDDHHMMSS] [--note "why"] [--function onceboard_claim …]
 * Stamps a new migration from the SQL function sources in lib/idempotency/sql/ — by default every
 * function whose source differs from its last migration.
 */
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    timestamp: { type: "string" },
    note: { type: "string" },
    function: { type: "string", multiple: true },
  },
});
const name = positionals[0];
if (!name) {
  console.error('usage: npm run db:stamp -- <name> [--timestamp YYYYMMDDHHMMSS] [--note "why"] [--function <name> …]');
  process.exit(2);
}
try {
  const { dir, functions } = await stampMigration({
    name,
    timestamp: values.timestamp,
    note: values.note,
    functions: values.function,
  });
  console.log(`stamped ${path.relative(process.cwd(), dir)}/migration.sql with ${functions.join(", ")}`);
} catch (error) {
  console.error(`db:stamp: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
