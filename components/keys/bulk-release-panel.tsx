"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { fetchJson, postJson } from "@/components/api/fetch-json";
import { useConsoleWritable } from "@/components/shell/console-mode";
import {
  BULK_ACTION_FINISHED,
  type BulkActionResponse,
  type BulkDryRunResponse,
  bulkActionQueryKey,
} from "@/lib/auth/bulk-types";
import { KEYS_SEARCH_QUERY_ROOT } from "@/lib/console/keys-types";
import { formatCount, formatUtc } from "@/lib/format";

/**
 * "Release every stuck claim matching this filter" (operators, a console that takes writes): a dry
 * run shows how many and a sample; confirming starts a background action (POST /api/v1/bulk/release),
 * whose progress is polled here and which can be cancelled.
 */
export function BulkReleasePanel({
  tenant,
  platform,
  q,
  jobType,
}: {
  tenant: string;
  platform: boolean;
  q?: string;
  jobType?: string;
}) {
  const writable = useConsoleWritable();
  const client = useQueryClient();
  const [actionId, setActionId] = useState<string | null>(null);
  const body = { ...(platform ? { tenant } : {}), ...(q ? { q } : {}), ...(jobType ? { jobType } : {}) };
  const dryRun = useMutation({
    mutationFn: () => postJson<BulkDryRunResponse>("/api/v1/bulk/release", { ...body, dryRun: true }),
  });
  const start = useMutation({
    mutationFn: () => postJson<BulkActionResponse>("/api/v1/bulk/release", body),
    onSuccess: (data) => {
      setActionId(data.action.id);
      dryRun.reset();
    },
  });
  const progress = useQuery({
    queryKey: bulkActionQueryKey(actionId ?? ""),
    queryFn: ({ signal }) => fetchJson<BulkActionResponse>(`/api/v1/bulk/${actionId}`, signal),
    enabled: actionId !== null,
    refetchInterval: (query) => {
      const state = query.state.data?.action.state;
      if (state && BULK_ACTION_FINISHED.includes(state)) {
        void client.invalidateQueries({ queryKey: [KEYS_SEARCH_QUERY_ROOT] });
        return false;
      }
      return 1000;
    },
  });
  const cancel = useMutation({
    mutationFn: () => postJson<BulkActionResponse>(`/api/v1/bulk/${actionId}/cancel`),
    onSettled: () => client.invalidateQueries({ queryKey: bulkActionQueryKey(actionId ?? "") }),
  });
  if (!writable) return null;

  const action = progress.data?.action;
  return (
    <section className="panel" aria-labelledby="bulk-release-heading" data-testid="bulk-release">
      <div className="panel-header">
        <h2 id="bulk-release-heading">Stuck claims matching this filter</h2>
        <span className="panel-meta">in progress with an expired lease; at-most-once steps are never released</span>
      </div>
      {action ? (
        <div role="status" data-testid="bulk-progress" data-state={action.state}>
          <p>
            Bulk release {action.state}: {formatCount(action.processed)} of {formatCount(action.total)} processed,{" "}
            {formatCount(action.applied)} released
            {action.processed > action.applied
              ? `, ${formatCount(action.processed - action.applied)} refused by the library's guards`
              : ""}
            {action.finishedAt ? ` (finished ${formatUtc(action.finishedAt)})` : ""}.
          </p>
          <progress max={action.total} value={action.processed} />
          {BULK_ACTION_FINISHED.includes(action.state) ? (
            <button type="button" className="button button-quiet" onClick={() => setActionId(null)}>
              Done
            </button>
          ) : (
            <button type="button" className="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>
              {cancel.isPending ? "Cancelling…" : "Cancel"}
            </button>
          )}
        </div>
      ) : dryRun.data ? (
        <div data-testid="bulk-dry-run">
          {dryRun.data.overCap ? (
            <p role="alert" className="login-error">
              More than {formatCount(dryRun.data.cap)} stuck claims match: over the cap for one action. Narrow the filter.
            </p>
          ) : dryRun.data.count === 0 ? (
            <p>No stuck claim matches this filter.</p>
          ) : (
            <>
              <p>
                {formatCount(dryRun.data.count)} stuck {dryRun.data.count === 1 ? "claim matches" : "claims match"}. The first:
              </p>
              <ul className="bulk-sample">
                {dryRun.data.sample.map((s) => (
                  <li key={s.key}>
                    <code>{s.key}</code>{" "}
                    <span className="muted">
                      {s.jobType} · attempt {s.attempt} · {s.owner ?? "?"} · lease ended {formatUtc(s.leaseUntil)}
                    </span>
                  </li>
                ))}
              </ul>
              <button type="button" className="button" onClick={() => start.mutate()} disabled={start.isPending}>
                {start.isPending ? "Starting…" : `Release ${formatCount(dryRun.data.count)}`}
              </button>{" "}
            </>
          )}
          <button type="button" className="button button-quiet" onClick={() => dryRun.reset()}>
            Close
          </button>
        </div>
      ) : (
        <button type="button" className="button button-quiet" onClick={() => dryRun.mutate()} disabled={dryRun.isPending}>
          {dryRun.isPending ? "Counting…" : "Release every stuck claim matching this filter…"}
        </button>
      )}
      {dryRun.isError || start.isError || cancel.isError ? (
        <p role="alert" className="login-error">
          {(dryRun.error ?? start.error ?? cancel.error)?.message}
        </p>
      ) : null}
    </section>
  );
}
