import type { Scope } from "../../auth/scope";
import { consoleDatabase } from "../../console/database";
import { Keyset } from "../../console/keyset";
import type { StatementQueryable } from "../../db/types";
import type { ReconciliationWindowListResponse } from "./contract";
import { RUN_COLUMNS, type RunRow, toReconciliationRun } from "./list-reconciliation-runs";

interface WindowSearch {
  provider?: string;
  /** The previous page's nextCursor. */
  cursor?: string;
  limit: number;
  now?: Date;
}

/**
 * Windows are listed by their latest run, newest started first, ties by id: the same total order
 * as the runs list, over the one run per window that no later run of the window follows.
 */
const WINDOW_KEYSET = new Keyset("windows", [
  { column: "r.started_at", type: "timestamptz" },
  { column: "r.id", type: "bigint" },
]);

// A window is (provider, window_from, window_to): the scheduler reruns its rolling hour every few
// minutes, so one window has many runs. The latest is the run no other run of its window follows
// in (started_at, id); both probes use the (provider, window_from, window_to, started_at DESC)
// index, and the keyset walks the (started_at DESC) one, stopping at the page's limit.
const LIST = {
  name: "console_list_reconciliation_windows",
  text: `
SELECT ${RUN_COLUMNS},
       (SELECT count(*) FROM reconciliation_runs a
         WHERE a.provider = r.provider AND a.window_from = r.window_from AND a.window_to = r.window_to)::int AS run_count,
       ${WINDOW_KEYSET.cursorColumns}
  FROM reconciliation_runs r
 WHERE ($1::text IS NULL OR r.provider = $1)
   AND NOT EXISTS (SELECT 1 FROM reconciliation_runs later
                    WHERE later.provider = r.provider AND later.window_from = r.window_from AND later.window_to = r.window_to
                      AND (later.started_at, later.id) > (r.started_at, r.id))
   AND ${WINDOW_KEYSET.after(2)}
 ORDER BY ${WINDOW_KEYSET.orderBy}
 LIMIT $4`,
};

/**
 * GET /api/v1/reconciliation/windows: each provider's window once, by its latest run, newest first,
 * with how many runs it had. A tenant scope sees the latest run as the runs list shows it (no
 * tallies, counts or failure text: those span tenants).
 */
export async function listReconciliationWindows(
  scope: Scope,
  search: WindowSearch,
  db: StatementQueryable = consoleDatabase(),
): Promise<ReconciliationWindowListResponse> {
  const now = search.now ?? new Date();
  const { rows } = await db.query<RunRow & { run_count: number }>({
    ...LIST,
    values: [search.provider ?? null, ...WINDOW_KEYSET.values(search.cursor), search.limit + 1],
  });
  const page = WINDOW_KEYSET.page(rows, search.limit);
  return {
    windows: page.rows.map((r) => ({
      provider: r.provider,
      windowFrom: r.window_from.toISOString(),
      windowTo: r.window_to.toISOString(),
      runCount: r.run_count,
      latest: toReconciliationRun(r, scope.platform, now),
    })),
    nextCursor: page.nextCursor,
  };
}
