import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DELIVERY_ANSWERS, EFFECT_STATUSES } from "../features/keys-and-effects/effects-types";
import { CLAIM_DURATION_BOUNDS } from "../features/overview/overview-types";
import { PARTITION_INTERVALS } from "../features/retention-and-gaps/retention-types";
import { PARTITION_INTERVALS as LIBRARY_PARTITION_INTERVALS, TIMELINE_ANSWERS } from "../idempotency/admin";
import { CLAIM_DURATION_BUCKETS } from "../idempotency/metrics";

/** The values of a CHECK (column = ANY (ARRAY[...])) constraint in the schema dump of a fresh install. */
function checkValues(constraint: string): string[] {
  const dump = fs.readFileSync(path.resolve(import.meta.dirname, "../../prisma/schema.sql"), "utf8");
  const line = dump.split("\n").find((l) => l.includes(`CONSTRAINT ${constraint} CHECK`));
  if (!line) throw new Error(`no constraint ${constraint} in prisma/schema.sql`);
  return [...line.matchAll(/'([^']+)'::text/g)].map((m) => m[1] as string);
}

/**
 * The console's browser-safe *-types modules copy a few of the library's constants (its entry
 * point brings pg along). These copies are the only ones, and they stay equal to the library's.
 */
describe("the console's copies of library constants", () => {
  it("claim-duration buckets: the Overview's bounds are the histogram's", () => {
    expect([...CLAIM_DURATION_BOUNDS]).toEqual(CLAIM_DURATION_BUCKETS);
  });

  it("partition intervals: the Retention API's are the library's and the table's CHECK", () => {
    expect([...PARTITION_INTERVALS]).toEqual([...LIBRARY_PARTITION_INTERVALS]);
    expect(checkValues("retention_settings_partition_interval_check")).toEqual([...PARTITION_INTERVALS]);
  });

  it("delivery answers: the key timeline's are the library's and the delivery_timeline CHECK", () => {
    expect([...DELIVERY_ANSWERS]).toEqual([...TIMELINE_ANSWERS]);
    expect(checkValues("delivery_timeline_answer_check")).toEqual([...DELIVERY_ANSWERS]);
  });

  it("effect statuses: the Keys API's are the effects table's CHECK", () => {
    expect(checkValues("effects_status_check")).toEqual([...EFFECT_STATUSES]);
  });
});
