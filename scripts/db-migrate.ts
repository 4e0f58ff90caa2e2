import { parseArgs } from "node:util";
import { provisionDatabase } from "../lib/db/provision";
import { distributeForCitus } from "../lib/idempotency/admin";
import { log, runMain } from "./cli";

// `npm run db:migrate -- --citus`: after the migrations, distribute the library's schema on the
// Citus coordinator DATABASE_URL names (docs/scaling.md); idempotent, so it is safe on every deploy.
const { values } = parseArgs({ options: { citus: { type: "boolean", default: false } } });

runMain(async () => {
  const db = await provisionDatabase({ log });
  try {
    if (values.citus) {
      if (db.embedded) throw new Error("--citus needs DATABASE_URL to name a Citus coordinator, not the embedded PostgreSQL");
      const { schema, changed } = await distributeForCitus(db.url);
      log(
        changed.length === 0
          ? `Citus: ${schema} was already distributed`
          : `Citus: ${schema} distributed (${changed.length} statements)\n${changed.map((s) => `  ${s}`).join("\n")}`,
      );
    }
  } finally {
    await db.stop();
  }
});
