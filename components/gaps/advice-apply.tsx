"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { AdvicePreview, SettingsUpdateView } from "@/lib/features/retention-and-gaps/contract";
import { RETENTION_QUERY_ROOT } from "@/lib/features/retention-and-gaps/retention-types";
import { formatCount, formatCountOf, formatDuration, formatUtc } from "@/lib/format";
import { ApiClientError, fetchJson, postJson, shouldRetry } from "../api/fetch-json";
import { useConsoleWritable } from "../shell/console-mode";
import { type Column, DataTable } from "../ui/data-table";
import { ErrorState } from "../ui/error-state";

/** How a blocker's setting is called on the page. */
const SETTING_LABEL: Record<AdvicePreview["blockers"][number]["setting"], string> = {
  retentionDays: "Retention (days)",
  maxRetryWindowDays: "Retry window (days)",
  workerMaxRetryWindow: "A live worker's retry window",
};

type SettingChange = readonly [name: string, before: number, after: number];

const CHANGE_COLUMNS: Column<SettingChange>[] = [
  { id: "setting", label: "Setting", kind: "text", priority: 1, cell: ([name]) => name },
  { id: "now", label: "Now", kind: "number", cell: ([, before]) => formatDuration(before * 86_400) },
  {
    id: "after",
    label: "After",
    kind: "number",
    cell: ([, before, after]) => (before === after ? "unchanged" : <strong>{formatDuration(after * 86_400)}</strong>),
  },
];

/** The settings the advice changes, before and after, one row each. */
function ChangeTable({ change }: { change: NonNullable<AdvicePreview["change"]> }) {
  const rows: SettingChange[] = [
    ["Retention", change.before.retentionDays, change.after.retentionDays],
    ["Retry window", change.before.maxRetryWindowDays, change.after.maxRetryWindowDays],
  ];
  return (
    <DataTable
      columns={CHANGE_COLUMNS}
      rows={rows}
      rowKey={([name]) => name}
      rowProps={([, before, after]) => ({ "data-changed": before !== after })}
      caption="The settings before and after the advice"
      testId="advice-change"
    />
  );
}

/** What must change first, setting by setting (a preview's blockers or a refused apply's issues). */
function Blockers({ items }: { items: { setting: string; message: string }[] }) {
  if (items.length === 0) return null;
  return (
    <ul data-testid="advice-blockers">
      {items.map((b) => (
        <li key={`${b.setting}:${b.message}`}>
          <strong>{SETTING_LABEL[b.setting as keyof typeof SETTING_LABEL] ?? b.setting}</strong>: {b.message}
        </li>
      ))}
    </ul>
  );
}

/** The partitions the advised settings treat differently from today's: what the next run would drop or now keep. */
function PartitionChanges({ preview }: { preview: AdvicePreview }) {
  const changes = preview.partitionChanges;
  if (changes.length === 0)
    return (
      <p className="muted" data-testid="advice-plan">
        No partition changes fate: the next maintenance run drops and keeps the same ones.
      </p>
    );
  const dropped = changes.filter((c) => c.after !== "keep");
  return (
    <div data-testid="advice-plan">
      <p>
        The next maintenance run would{" "}
        {dropped.length > 0 ? (
          <>
            <strong>detach and drop {formatCountOf(dropped.length, "partition")}</strong> it keeps today (their rows are deleted
            for good)
          </>
        ) : null}
        {dropped.length > 0 && dropped.length < changes.length ? " and " : null}
        {dropped.length < changes.length ? (
          <>keep {formatCountOf(changes.length - dropped.length, "partition")} it drops today</>
        ) : null}
        :
      </p>
      <ul className="retention-plan">
        {changes.map((c) => (
          <li key={c.name}>
            {c.after === "keep" ? "keep" : "drop"} <code>{c.name}</code> {formatUtc(c.from, { seconds: false })} –{" "}
            {formatUtc(c.to, { seconds: false })}, ~{formatCount(Math.round(c.estimatedRows))} rows: {c.reason}
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * Apply the advice (platform admins on a writable console; the button is not rendered otherwise):
 * the change as a before/after, what must change first, the partitions it implies, then a
 * confirmation. The confirm carries the settings the preview was made against, so a change made in
 * between answers 409 and nothing moves. `adviceSearch` is the advice's query (window, jobType).
 */
export function AdviceApply({ canApply, adviceSearch }: { canApply: boolean; adviceSearch: string }) {
  const writable = useConsoleWritable();
  const [open, setOpen] = useState(false);
  const queryClient = useQueryClient();
  const previewUrl = `/api/v1/retention/advice/preview${adviceSearch ? `?${adviceSearch}` : ""}`;
  const preview = useQuery({
    queryKey: [RETENTION_QUERY_ROOT, "advice-preview", adviceSearch],
    queryFn: ({ signal }) => fetchJson<AdvicePreview>(previewUrl, signal),
    enabled: open,
    retry: shouldRetry,
    staleTime: 0,
  });
  const apply = useMutation({
    mutationFn: (p: AdvicePreview) =>
      postJson<SettingsUpdateView>(`/api/v1/retention/advice/apply${adviceSearch ? `?${adviceSearch}` : ""}`, {
        retentionDays: p.change?.after.retentionDays,
        expect: p.change?.before,
      }),
    // The settings moved: the Retention page, the gaps' advice and this preview all read them.
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: [RETENTION_QUERY_ROOT] }),
        queryClient.invalidateQueries({ queryKey: ["gaps"] }),
      ]),
  });
  if (!canApply || !writable) return null;
  if (!open)
    return (
      <p>
        <button type="button" className="button" onClick={() => setOpen(true)} data-testid="advice-apply">
          Apply this advice…
        </button>
      </p>
    );

  const close = () => {
    setOpen(false);
    apply.reset();
  };
  const p = preview.data;
  return (
    <section className="panel advice-apply" aria-labelledby="advice-apply-heading" data-testid="advice-apply-panel">
      <div className="panel-header">
        <h3 id="advice-apply-heading">Apply the advice</h3>
        <button type="button" className="button button-quiet" onClick={close}>
          {apply.isSuccess ? "Close" : "Cancel"}
        </button>
      </div>
      <div className="panel-body">
        {preview.isPending ? (
          <p role="status">Working out what the advice changes…</p>
        ) : preview.isError || !p ? (
          <ErrorState
            title="The change could not be worked out"
            message={preview.error instanceof Error ? preview.error.message : String(preview.error)}
            code={preview.error instanceof ApiClientError ? preview.error.code : undefined}
            onRetry={() => void preview.refetch()}
            retrying={preview.isFetching}
          />
        ) : p.change === null ? (
          <p data-testid="advice-nothing">
            {p.advice.status === "recommended"
              ? "The retention already is what the advice recommends: nothing to apply."
              : "The advisor makes no recommendation, so there is nothing to apply."}
          </p>
        ) : apply.isSuccess ? (
          <p role="status" data-testid="advice-applied">
            Applied: the retention is now {formatDuration(apply.data.settings.retentionDays * 86_400)} (audited as
            retention.advice.apply). The partitions follow at the next maintenance run, or with Apply plan on the Retention page.
            {apply.data.warnings.length > 0 ? ` Warning: ${apply.data.warnings.join("; ")}.` : ""}
          </p>
        ) : (
          <>
            <ChangeTable change={p.change} />
            {p.refusal ? (
              <div className="banner banner-danger" role="alert" data-testid="advice-refusal">
                <p>
                  <code>{p.refusal.code}</code> This change cannot be applied as it is. What must change first:
                </p>
                <Blockers items={p.blockers} />
              </div>
            ) : null}
            {p.warnings.map((w) => (
              <p key={w} className="banner">
                {w}
              </p>
            ))}
            <PartitionChanges preview={p} />
            {apply.isError ? (
              <div className="banner banner-danger" role="alert" data-testid="advice-apply-error">
                <p>
                  Not applied: {apply.error.message}
                  {apply.error instanceof ApiClientError ? ` (${apply.error.code})` : ""}
                </p>
                {apply.error instanceof ApiClientError ? (
                  <Blockers
                    items={apply.error.issues
                      .filter((i) => i.path in SETTING_LABEL)
                      .map((i) => ({ setting: i.path, message: i.message }))}
                  />
                ) : null}
                {apply.error instanceof ApiClientError && apply.error.code === "RETENTION_STALE" ? (
                  <button
                    type="button"
                    className="button"
                    onClick={() => {
                      apply.reset();
                      void preview.refetch();
                    }}
                  >
                    Review again
                  </button>
                ) : null}
              </div>
            ) : null}
            <p>
              <button
                type="button"
                className="button"
                disabled={apply.isPending || p.refusal !== null}
                onClick={() => apply.mutate(p)}
                data-testid="advice-confirm"
              >
                {apply.isPending
                  ? "Applying…"
                  : `Confirm: set the retention to ${formatDuration(p.change.after.retentionDays * 86_400)}`}
              </button>
            </p>
          </>
        )}
      </div>
    </section>
  );
}
