import path from "node:path";
import { parseArgs } from "node:util";
import { stampMigration } from "./sql-sources";

/**
 * npm run db:stamp -- <name> [--note "why"] [--function onceboard_claim …]
 * Stamps the library's next migration (lib/idempotency/migrations/NNNN_<name>.sql) from the SQL function sources in lib/idempotency/sql/ — by default every
 * function whose source differs from its last migration.
 */
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    note: { type: "string" },
    function: { type: "string", multiple: true },
  },
});
const name = positionals[0];
if (!name) {
  console.error('usage: npm run db:stamp -- <name> [--note "why"] [--function <name> …]');
  process.exit(2);
}
try {
  const { file, functions } = await stampMigration({
    name,
    note: values.note,
    functions: values.function,
  });
  console.log(`stamped ${path.relative(process.cwd(), file)} with ${functions.join(", ")}`);
} catch (error) {
  console.error(`db:stamp: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
