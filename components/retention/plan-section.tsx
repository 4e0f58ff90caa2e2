"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { KEYS_SEARCH_QUERY_ROOT } from "@/lib/features/keys-and-effects/keys-types";
import type { ApplyResultView, PlanView } from "@/lib/features/retention-and-gaps/contract";
import { RETENTION_QUERY_ROOT } from "@/lib/features/retention-and-gaps/retention-types";
import { formatCount, formatCountOf, formatUtc } from "@/lib/format";
import { postJson } from "../api/fetch-json";
import { useConsoleWritable } from "../shell/console-mode";

/** What the next maintenance run would do, and (for admins) the button that runs it now. */
export function PlanSection({ plan, canApply: admin }: { plan: PlanView; canApply: boolean }) {
  const writable = useConsoleWritable();
  const canApply = admin && writable;
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const apply = useMutation({
    mutationFn: () => postJson<ApplyResultView>("/api/v1/retention/apply"),
    // A run changes the partitions, the plan and the runs list, and drops expired keys from searches.
    onSettled: () => {
      setConfirming(false);
      return Promise.all([
        queryClient.invalidateQueries({ queryKey: [RETENTION_QUERY_ROOT] }),
        queryClient.invalidateQueries({ queryKey: [KEYS_SEARCH_QUERY_ROOT] }),
      ]);
    },
  });
  const drops = plan.partitions.filter((p) => p.action !== "keep");
  const nothingToDo = plan.create.length === 0 && drops.length === 0 && plan.orphans.length === 0 && plan.index.length === 0;

  return (
    <section className="panel" aria-labelledby="retention-plan">
      <div className="panel-header">
        <h2 id="retention-plan">Plan</h2>
        {/* Nothing to apply: no button and no confirmation, the plan below says so. */}
        {canApply && !nothingToDo ? (
          confirming ? (
            <span>
              <button type="button" className="button" onClick={() => apply.mutate()} disabled={apply.isPending}>
                {apply.isPending ? "Applying…" : "Confirm apply"}
              </button>{" "}
              <button type="button" className="button button-quiet" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </span>
          ) : (
            <button type="button" className="button" onClick={() => setConfirming(true)}>
              Apply plan…
            </button>
          )
        ) : null}
      </div>
      {confirming && !nothingToDo ? (
        <p className="muted">
          This creates {formatCountOf(plan.create.length, "partition")}, detaches and drops {formatCount(drops.length)} (their
          rows are deleted for good) and indexes {formatCountOf(plan.index.length, "closed partition")}.
        </p>
      ) : null}
      {apply.data ? (
        <p role="status" data-testid="apply-result">
          Run {apply.data.runId ?? "-"}: {apply.data.result}, {formatCountOf(apply.data.operations.length, "operation")}
          {apply.data.error ? `: ${apply.data.error}` : ""}
        </p>
      ) : null}
      {apply.isError ? (
        <p role="alert">
          Apply failed: {apply.error.message}
          {"code" in apply.error ? ` (${String(apply.error.code)})` : ""}
        </p>
      ) : null}
      {nothingToDo ? (
        <p className="panel-empty" data-testid="plan-empty">
          Nothing to do: every partition ahead exists, nothing has expired and every closed partition is indexed.
        </p>
      ) : (
        <ul className="retention-plan" data-testid="plan">
          {plan.create.map((c) => (
            <li key={`c-${c.name}`}>
              create <code>{c.name}</code> {formatUtc(c.from, { seconds: false })} – {formatUtc(c.to, { seconds: false })} (
              {c.reason})
            </li>
          ))}
          {drops.map((p) => (
            <li key={`d-${p.name}`}>
              {p.action === "finalize" ? "finish detach and drop" : "detach and drop"} <code>{p.name}</code>: {p.reason}
            </li>
          ))}
          {plan.orphans.map((o) => (
            <li key={`o-${o}`}>
              drop <code>{o}</code> (detached by an earlier run)
            </li>
          ))}
          {plan.index.map((i) => (
            <li key={`i-${i.partition}`}>
              index <code>{i.partition}</code>: {i.reason}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
