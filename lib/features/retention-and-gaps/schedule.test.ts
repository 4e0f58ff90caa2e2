import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { startConsoleMaintenance } from "./schedule";

/**
 * CONSOLE_READ_ONLY=true ran the scheduled partition maintenance (issue 35, finding 7): a read-only
 * console creates, detaches and drops nothing. It starts no maintenance loop, so no run is recorded.
 */
describe("the console's maintenance loop", () => {
  let db: TestDatabase;
  const saved = { DATABASE_URL: process.env.DATABASE_URL, CONSOLE_READ_ONLY: process.env.CONSOLE_READ_ONLY };

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await globalThis.__onceboardMaintenanceSchedule?.stop();
    globalThis.__onceboardMaintenanceSchedule = undefined;
    await db.drop();
  });

  it("is not started by a read-only console: no maintenance run is recorded", async () => {
    process.env.DATABASE_URL = db.url;
    process.env.CONSOLE_READ_ONLY = "true";
    expect(startConsoleMaintenance()).toBeNull();
    expect(globalThis.__onceboardMaintenanceSchedule).toBeUndefined();
    const runs = await db.pool.query("SELECT count(*)::int AS n FROM maintenance_runs");
    expect(runs.rows[0].n).toBe(0);
  });
});
