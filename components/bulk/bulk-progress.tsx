"use client";

import { type QueryKey, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { fetchJson, postJson } from "@/components/api/fetch-json";
import { BULK_ACTION_FINISHED, bulkActionQueryKey } from "@/lib/features/bulk-actions/bulk-types";
import type { BulkActionResponse } from "@/lib/features/bulk-actions/contract";
import { formatCount, formatUtc } from "@/lib/format";
import { BulkItems } from "./bulk-items";

/** How a page names a bulk action's work: "Bulk release" … "released", and what a refused item means. */
export interface BulkWording {
  title: string;
  done: string;
  refused: string;
}

/**
 * A running bulk action's progress (GET /api/v1/bulk/{id}, polled each second until it ends), its
 * items a page at a time (components/bulk/bulk-items.tsx) and its Cancel, shared by the Keys
 * page's bulk release and the Reconciliation page's bulk acknowledge. When the action ends, the page's own
 * lists (`invalidates`) are read again.
 */
export function BulkProgress({
  actionId,
  wording,
  invalidates,
  onDone,
}: {
  actionId: string;
  wording: BulkWording;
  invalidates: QueryKey;
  onDone: () => void;
}) {
  const client = useQueryClient();
  const progress = useQuery({
    queryKey: bulkActionQueryKey(actionId),
    queryFn: ({ signal }) => fetchJson<BulkActionResponse>(`/api/v1/bulk/${actionId}`, signal),
    refetchInterval: (query) => {
      const state = query.state.data?.action.state;
      if (state && BULK_ACTION_FINISHED.includes(state)) {
        void client.invalidateQueries({ queryKey: invalidates });
        return false;
      }
      return 1000;
    },
  });
  const cancel = useMutation({
    mutationFn: () => postJson<BulkActionResponse>(`/api/v1/bulk/${actionId}/cancel`),
    onSettled: () => client.invalidateQueries({ queryKey: bulkActionQueryKey(actionId) }),
  });
  const action = progress.data?.action;
  if (!action) {
    return progress.isError ? (
      <p role="alert" className="login-error">
        Could not read the bulk action's progress: {progress.error.message}
      </p>
    ) : (
      <p role="status">Starting…</p>
    );
  }
  const finished = BULK_ACTION_FINISHED.includes(action.state);
  return (
    <>
      <div role="status" data-testid="bulk-progress" data-state={action.state}>
        <p>
          {wording.title} {action.state}: {formatCount(action.processed)} of {formatCount(action.total)} processed,{" "}
          {formatCount(action.applied)} {wording.done}
          {action.processed > action.applied ? `, ${formatCount(action.processed - action.applied)} ${wording.refused}` : ""}
          {action.finishedAt ? ` (finished ${formatUtc(action.finishedAt)})` : ""}.
        </p>
        <progress max={action.total} value={action.processed} />
        {finished ? (
          <button type="button" className="button button-quiet" onClick={onDone}>
            Done
          </button>
        ) : (
          <button type="button" className="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>
            {cancel.isPending ? "Cancelling…" : "Cancel"}
          </button>
        )}
        {cancel.isError ? (
          <p role="alert" className="login-error">
            {cancel.error.message}
          </p>
        ) : null}
      </div>
      {/* Beside the status, not in it: a screen reader announces the counts, not every row. */}
      <BulkItems actionId={actionId} live={!finished} done={wording.done} />
    </>
  );
}
