"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { postJson } from "@/components/api/fetch-json";
import { BulkProgress, type BulkWording } from "@/components/bulk/bulk-progress";
import { useConsoleWritable } from "@/components/shell/console-mode";
import type { BulkActionResponse, BulkDryRunResponse } from "@/lib/features/bulk-actions/contract";
import { KEYS_SEARCH_QUERY_ROOT } from "@/lib/features/keys-and-effects/keys-types";
import { formatCount, formatUtc } from "@/lib/format";

const RELEASE_WORDING: BulkWording = { title: "Bulk release", done: "released", refused: "refused by the library's guards" };

/**
 * "Release every stuck claim matching this filter" (operators, a console that takes writes): a dry
 * run shows how many and a sample; confirming starts a background action (POST /api/v1/bulk/release),
 * whose progress is polled here and which can be cancelled (components/bulk/bulk-progress.tsx).
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
  if (!writable) return null;

  return (
    <section className="panel" aria-labelledby="bulk-release-heading" data-testid="bulk-release">
      <div className="panel-header">
        <h2 id="bulk-release-heading">Stuck claims matching this filter</h2>
        <span className="panel-meta">in progress with an expired lease; at-most-once steps are never released</span>
      </div>
      {actionId ? (
        <BulkProgress
          actionId={actionId}
          wording={RELEASE_WORDING}
          invalidates={[KEYS_SEARCH_QUERY_ROOT]}
          onDone={() => setActionId(null)}
        />
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
      {dryRun.isError || start.isError ? (
        <p role="alert" className="login-error">
          {(dryRun.error ?? start.error)?.message}
        </p>
      ) : null}
    </section>
  );
}
