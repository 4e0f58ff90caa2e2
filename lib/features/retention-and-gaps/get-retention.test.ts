import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { getPrisma } from "../../db/prisma";
import { getRetention, getRetentionPlan } from "./get-retention";

/**
 * The Retention page's read model through the console's own pools (the maintenance pool and the
 * Prisma client), on DATABASE_URL as a user gives it: a URL with no search_path. The pools must
 * set it themselves; when the maintenance pool did not, `FROM effects` failed on every start.
 */
describe("the Retention read model on a plain DATABASE_URL", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    process.env.DATABASE_URL = db.url;
    globalThis.__onceboardMaintenancePool = undefined;
  });
  afterAll(async () => {
    await globalThis.__onceboardMaintenancePool?.end();
    globalThis.__onceboardMaintenancePool = undefined;
    await getPrisma().$disconnect();
    await db?.drop();
  });

  it("is reached with a URL that carries no search_path", () => {
    expect(new URL(db.url).searchParams.get("options")).toBeNull();
  });

  it("answers the platform and a tenant with the production pools", async () => {
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, max_gap_seconds)
       VALUES ('acme', 'k1', 'x', 'completed', 'once', now() - interval '1 hour', 120)`,
    );
    const view = await getRetention(Scope.operator());
    expect(view.plan?.partitions.length).toBeGreaterThan(0);
    expect(view.observedMaxGapSeconds).toBe(120);
    expect((await getRetention(Scope.ofPrincipal({ tenantId: "globex" }))).observedMaxGapSeconds).toBeNull();
    expect((await getRetentionPlan(Scope.operator())).partitions.length).toBeGreaterThan(0);
  });
});
