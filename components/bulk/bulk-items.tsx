"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { fetchJson } from "@/components/api/fetch-json";
import { type Column, DataTable } from "@/components/ui/data-table";
import { bulkItemsQueryKey, bulkItemsUrl } from "@/lib/features/bulk-actions/bulk-types";
import type { BulkItemsResponse, BulkItemView } from "@/lib/features/bulk-actions/contract";
import { formatUtc } from "@/lib/format";

/**
 * A bulk action's items, a page at a time in the order they run (GET /api/v1/bulk/{id}/items):
 * which key was done, which refused and why, which is still to come. The action lives in the
 * panel, not the URL, so the pages do too: the cursors read so far, the last being this page's.
 */
export function BulkItems({ actionId, live, done }: { actionId: string; live: boolean; done: string }) {
  const [trail, setTrail] = useState<(string | null)[]>([null]);
  const cursor = trail[trail.length - 1] ?? null;
  const items = useQuery({
    queryKey: bulkItemsQueryKey(actionId, cursor),
    queryFn: ({ signal }) => fetchJson<BulkItemsResponse>(bulkItemsUrl(actionId, cursor), signal),
    // While the action runs its items change status: read the page again with the progress.
    refetchInterval: live ? 1000 : false,
  });
  if (items.isError) {
    return (
      <p role="alert" className="login-error">
        Could not read the bulk action's items: {items.error.message}
      </p>
    );
  }
  if (!items.data) return null;
  return (
    <BulkItemsTable
      page={items.data}
      done={done}
      earlier={trail.length > 1 ? () => setTrail((shown) => shown.slice(0, -1)) : null}
      later={(next) => setTrail((shown) => [...shown, next])}
    />
  );
}

function statusOf(item: BulkItemView, done: string): string {
  if (item.status === "applied") return done;
  if (item.status === "refused") return `refused: ${item.error ?? "no reason given"}`;
  return "pending";
}

/** An item is named by its key; its place in the run, what became of it and when are beside it. */
function itemColumns(done: string): Column<BulkItemView>[] {
  return [
    { id: "seq", label: "#", kind: "number", cell: (item) => item.seq },
    { id: "key", label: "Key", kind: "key", priority: 1, cell: (item) => <code>{item.key}</code> },
    { id: "status", label: "Status", kind: "text", cell: (item) => statusOf(item, done) },
    { id: "done", label: "Done", kind: "time", cell: (item) => formatUtc(item.doneAt, { empty: "–" }) },
  ];
}

/**
 * One page of items and its pager. "Later items" carries the next page's cursor (data-cursor),
 * the one it moves to, so a test can follow it as a click does.
 */
export function BulkItemsTable({
  page,
  done,
  earlier,
  later,
}: {
  page: BulkItemsResponse;
  done: string;
  earlier: (() => void) | null;
  later: (cursor: string) => void;
}) {
  const next = page.nextCursor;
  return (
    <div data-testid="bulk-items">
      <DataTable
        columns={itemColumns(done)}
        rows={page.items}
        rowKey={(item) => String(item.seq)}
        rowProps={(item) => ({ "data-bulk-item": item.key, "data-status": item.status })}
        caption="The action's items, in the order they run"
      />
      {earlier || next ? (
        <nav className="pager" aria-label="Item pages">
          {earlier ? (
            <button type="button" className="button button-quiet" data-testid="bulk-items-earlier" onClick={earlier}>
              Earlier items
            </button>
          ) : null}
          {next ? (
            <button
              type="button"
              className="button button-quiet"
              data-testid="bulk-items-later"
              data-cursor={next}
              onClick={() => later(next)}
            >
              Later items
            </button>
          ) : null}
        </nav>
      ) : null}
    </div>
  );
}
