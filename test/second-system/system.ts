import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createTestDatabase } from "../database";
import type { KnownSystem } from "../known-system";
import { startPayco } from "./payco";
import { secondSystemProvidersFile, TENANTS, writeKnownWorkload } from "./workload";

/** The second system, started for the console-truth tests: its database, PayCo, its providers file and its workload. */
export const secondSystem: KnownSystem = {
  name: "the second system (northwind, umbrella; PayCo)",
  tenants: TENANTS,
  foreignJobTypes: /order\.(paid|capture|refund|receipt|mark_paid)/,
  async start() {
    const db = await createTestDatabase({ poolSize: 6 });
    const payco = await startPayco();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-second-system-"));
    const providersFile = path.join(dir, "providers.json");
    fs.writeFileSync(providersFile, JSON.stringify(secondSystemProvidersFile(payco), null, 2));
    const planted = await writeKnownWorkload(db.pool, payco);
    return {
      db,
      env: { ONCEBOARD_PROVIDERS_FILE: providersFile, PAYCO_TOKEN: payco.token },
      provider: "payco",
      planted,
      async close() {
        await payco.close();
        await db.drop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};
