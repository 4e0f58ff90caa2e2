import { provisionDatabase } from "../lib/db/provision";
import { log, runMain } from "./cli";

runMain(async () => {
  const db = await provisionDatabase({ log });
  await db.stop();
});
