import fc from "fast-check";
import { expect } from "vitest";
import type { TestDatabase } from "../../../test/database";

/**
 * The keyset property every list of the console is held to (lib/console/keyset.test.ts, the
 * admin lists' tests): N rows with deliberately equal times (a handful of distinct instants), any
 * page size, rows inserted between pages at the same instants. Every row present at the start is
 * returned exactly once, and the pages read in the list's declared order, which each list states
 * itself in SQL over the typed columns (the oracle), not through the list's own code.
 */

/** One list under test: how to seed a row at a time, read a page, and say the declared order. */
export interface ListUnderTest {
  reset(db: TestDatabase): Promise<void>;
  /** Inserts one row per time; returns their ids as the list names them. */
  insert(db: TestDatabase, times: Date[]): Promise<string[]>;
  page(db: TestDatabase, limit: number, cursor: string | undefined): Promise<{ ids: string[]; nextCursor: string | null }>;
  /** Every row's id in the declared order, as the oracle's SQL sorts them. */
  declaredOrder(db: TestDatabase): Promise<string[]>;
}

const walkCase = fc.record({
  rows: fc.integer({ min: 1, max: 40 }),
  instants: fc.integer({ min: 1, max: 4 }),
  pageSize: fc.integer({ min: 1, max: 15 }),
  insertedPerPage: fc.integer({ min: 0, max: 3 }),
  seed: fc.integer(),
});

/** Runs the property for one list; fast-check shrinks a failure to the smallest case. */
export async function assertPagesExactlyOnce(db: TestDatabase, list: ListUnderTest, numRuns = 12): Promise<void> {
  await fc.assert(
    fc.asyncProperty(walkCase, async ({ rows, instants, pageSize, insertedPerPage, seed }) => {
      await list.reset(db);
      const now = Date.now();
      // Whole milliseconds an hour ago: every list shows its times to the millisecond.
      const base = Math.floor(now / 1000) * 1000 - 3_600_000;
      const instant = (i: number) => new Date(base + (Math.abs(seed + i * 7919) % instants) * 1000);
      const atStart = await list.insert(
        db,
        Array.from({ length: rows }, (_, i) => instant(i)),
      );
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      let inserted = 0;
      let rowsInTable = atStart.length;
      do {
        const page = await list.page(db, pageSize, cursor);
        seen.push(...page.ids);
        cursor = page.nextCursor ?? undefined;
        // Rows written while the user reads, at the very instants being paged through (some
        // land behind the cursor and are read too): as many as there were rows, so the walk ends.
        const inserting = Math.min(insertedPerPage, rows - inserted);
        if (inserting > 0) {
          const added = await list.insert(
            db,
            Array.from({ length: inserting }, (_, i) => instant(pages * 31 + i)),
          );
          inserted += inserting;
          rowsInTable += added.length;
        }
        pages++;
        if (pages > rowsInTable + 1) throw new Error("the pages never end");
      } while (cursor);
      // Never a row twice.
      expect(new Set(seen).size, `a row repeated: ${seen.join(",")}`).toBe(seen.length);
      // Every row present at the start, once.
      const missing = atStart.filter((id) => !seen.includes(id));
      expect(missing, `${missing.length} of ${rows} rows never reached`).toEqual([]);
      // In the declared order.
      const order = await list.declaredOrder(db);
      const position = new Map(order.map((id, i) => [id, i]));
      const positions = seen.map((id) => position.get(id) ?? -1);
      expect(
        positions.every((p, i) => i === 0 || p > (positions[i - 1] ?? -1)),
        "pages out of the declared order",
      ).toBe(true);
    }),
    { numRuns },
  );
}
