"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { fetchJson } from "@/components/api/fetch-json";
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
      <div className="table-scroll">
        <table className="data-table">
          <caption className="sr-only">The action's items, in the order they run</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Key</th>
              <th scope="col">Status</th>
              <th scope="col">Done</th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((item) => (
              <tr key={item.seq} data-bulk-item={item.key} data-status={item.status}>
                <td className="num">{item.seq}</td>
                <td>
                  <code>{item.key}</code>
                </td>
                <td>{statusOf(item, done)}</td>
                <td>{formatUtc(item.doneAt, { empty: "–" })}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
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
