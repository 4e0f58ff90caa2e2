"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { postJson } from "@/components/api/fetch-json";
import { BulkProgress, type BulkWording } from "@/components/bulk/bulk-progress";
import { useConsoleWritable } from "@/components/shell/console-mode";
import type { BulkAcknowledgeDryRunResponse, BulkActionResponse } from "@/lib/features/bulk-actions/contract";
import { type FindingFilters, RECONCILIATION_QUERY_ROOT } from "@/lib/features/reconciliation/reconciliation-types";
import { formatCount, formatUtc } from "@/lib/format";
import { FindingKindBadge } from "./finding-kind-badge";

const ACKNOWLEDGE_WORDING: BulkWording = {
  title: "Bulk acknowledge",
  done: "acknowledged",
  refused: "left as they were (no longer open)",
};

/** The page's filter as POST /api/v1/bulk/acknowledge-findings takes it (a tenant session's tenant is implied). */
function bodyOf(filters: FindingFilters, platform: boolean): Record<string, string> {
  const body: Record<string, string> = {};
  for (const name of ["kind", "provider", "jobType", "from", "to"] as const) {
    const value = filters[name];
    if (value) body[name] = value;
  }
  if (platform && filters.tenant) body.tenant = filters.tenant;
  return body;
}

/**
 * "Acknowledge every open finding matching this filter" (operators, a console that takes writes,
 * the open findings shown): a dry run shows how many and a sample; with a note, confirming starts a
 * background action whose progress is shown here and which can be cancelled. It resumes on its own
 * if the console restarts (lib/features/bulk-actions/bulk-runner.ts).
 */
export function BulkAcknowledgePanel({ filters, platform }: { filters: FindingFilters; platform: boolean }) {
  const writable = useConsoleWritable();
  const [actionId, setActionId] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const body = bodyOf(filters, platform);
  const dryRun = useMutation({
    mutationFn: () => postJson<BulkAcknowledgeDryRunResponse>("/api/v1/bulk/acknowledge-findings", { ...body, dryRun: true }),
  });
  const start = useMutation({
    mutationFn: () => postJson<BulkActionResponse>("/api/v1/bulk/acknowledge-findings", { ...body, note: note.trim() }),
    onSuccess: (data) => {
      setActionId(data.action.id);
      setNote("");
      dryRun.reset();
    },
  });
  if (!writable) return null;

  return (
    <section className="panel" aria-labelledby="bulk-acknowledge-heading" data-testid="bulk-acknowledge">
      <div className="panel-header">
        <h2 id="bulk-acknowledge-heading">Open findings matching this filter</h2>
        <span className="panel-meta">each acknowledged with your note and audited; resolved ones are left alone</span>
      </div>
      {actionId ? (
        <BulkProgress
          actionId={actionId}
          wording={ACKNOWLEDGE_WORDING}
          invalidates={[RECONCILIATION_QUERY_ROOT]}
          onDone={() => setActionId(null)}
        />
      ) : dryRun.data ? (
        <div data-testid="bulk-dry-run">
          {dryRun.data.overCap ? (
            <p role="alert" className="login-error">
              More than {formatCount(dryRun.data.cap)} open findings match: over the cap for one action. Narrow the filter.
            </p>
          ) : dryRun.data.count === 0 ? (
            <p>No open finding matches this filter.</p>
          ) : (
            <form
              className="finding-state-form"
              onSubmit={(event) => {
                event.preventDefault();
                start.mutate();
              }}
            >
              <p className="form-line">
                {formatCount(dryRun.data.count)} open {dryRun.data.count === 1 ? "finding matches" : "findings match"}
                {dryRun.data.tenant === null ? " across every tenant" : ""}. The first:
              </p>
              <ul className="bulk-sample form-line">
                {dryRun.data.sample.map((f) => (
                  <li key={f.id}>
                    <FindingKindBadge kind={f.kind} /> {f.detail}{" "}
                    <span className="muted">
                      {f.provider} · {f.tenant ?? "no tenant named"} · last seen {formatUtc(f.lastSeenAt)}
                    </span>
                  </li>
                ))}
              </ul>
              <label>
                Note{" "}
                <input
                  className="input"
                  name="note"
                  value={note}
                  onChange={(event) => setNote(event.target.value)}
                  required
                  maxLength={2000}
                  placeholder="kept with each finding"
                  size={40}
                />
              </label>
              <button type="submit" className="button" disabled={start.isPending || note.trim() === ""}>
                {start.isPending ? "Starting…" : `Acknowledge ${formatCount(dryRun.data.count)}`}
              </button>
            </form>
          )}
          <button type="button" className="button button-quiet" onClick={() => dryRun.reset()}>
            Close
          </button>
        </div>
      ) : (
        <button type="button" className="button button-quiet" onClick={() => dryRun.mutate()} disabled={dryRun.isPending}>
          {dryRun.isPending ? "Counting…" : "Acknowledge every open finding matching this filter…"}
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
