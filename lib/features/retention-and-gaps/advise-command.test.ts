import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { ensureEffectPartitions } from "../../db/partitions";
import { runAdviseCommand } from "./advise-command";
import { GAPS_SEED_DAYS_BACK, seedGaps } from "./testing/seed-gaps";

describe("npm run retention -- advise (runAdviseCommand)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { back: GAPS_SEED_DAYS_BACK + 1, ahead: 1 });
    await seedGaps(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const run = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdviseCommand(args, {
      open: async () => ({ url: db.url, stop: async () => {} }),
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    return { code, out, err };
  };

  it("prints the recommendation, the red comparison and a summary line", async () => {
    const { code, out } = await run([]);
    expect(code).toBe(0);
    expect(out.join("\n")).toMatch(
      /RED: The retention \(7 d\) is shorter than the longest observed gap \(more than 7 d\): 28 duplicates/,
    );
    expect(out.at(-1)).toBe("advice status=recommended recommended_days=23 retention_days=7 verdict=below_observed_max late=28");
  });

  it("exits 2 with the reason when the advisor refuses, and prints JSON on --json", async () => {
    const { code, out } = await run(["--min-samples", "100000", "--json"]);
    expect(code).toBe(2);
    const advice = JSON.parse(out.join("\n"));
    expect(advice.refusals[0].code).toBe("TOO_FEW_SAMPLES");
  });

  it("rejects a bad flag with the usage", async () => {
    const { code, err } = await run(["--basis", "p42"]);
    expect(code).toBe(1);
    expect(err.join("\n")).toMatch(/basis[\s\S]*usage: npm run retention -- advise/);
  });
});
