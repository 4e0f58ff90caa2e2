"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { FindingStateResponse } from "@/lib/features/reconciliation/contract";
import {
  FINDING_ACTIONS,
  type FindingAction,
  type FindingState,
  findingApiUrl,
  RECONCILIATION_QUERY_ROOT,
} from "@/lib/features/reconciliation/reconciliation-types";
import { postJson } from "../api/fetch-json";
import { useConsoleWritable } from "../shell/console-mode";

const LABEL: Record<FindingAction, string> = { acknowledge: "Acknowledge", resolve: "Resolve" };

/** An operator's acknowledge/resolve with a note (kept with the finding and in the audit log). */
export function FindingStateForm({ id, state }: { id: string; state: FindingState }) {
  const [note, setNote] = useState("");
  const client = useQueryClient();
  const change = useMutation({
    mutationFn: (action: FindingAction) =>
      postJson<FindingStateResponse>(`${findingApiUrl(id)}/${action}`, { note: note.trim() }),
    // The finding, the lists it leaves or joins and the runs' counts all read the same rows.
    onSuccess: () => setNote(""),
    onSettled: () => client.invalidateQueries({ queryKey: [RECONCILIATION_QUERY_ROOT] }),
  });
  const writable = useConsoleWritable();
  const allowed = (Object.keys(FINDING_ACTIONS) as FindingAction[]).filter((action) =>
    action === "acknowledge" ? state === "open" : state !== "resolved",
  );
  // A read-only console (CONSOLE_READ_ONLY) shows no write buttons; its API refuses them anyway.
  if (allowed.length === 0 || !writable) return null;
  return (
    <form
      className="finding-state-form"
      data-testid="finding-state-form"
      onSubmit={(event) => {
        event.preventDefault();
        const action = ((event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null)?.value as FindingAction;
        if (action) change.mutate(action);
      }}
    >
      <label>
        Note{" "}
        <input
          className="input"
          name="note"
          value={note}
          onChange={(event) => setNote(event.target.value)}
          required
          maxLength={2000}
          placeholder="what you found, what you did"
          size={40}
        />
      </label>
      {allowed.map((action) => (
        <button key={action} type="submit" name="action" value={action} className="button" disabled={change.isPending}>
          {LABEL[action]}
        </button>
      ))}
      {change.isSuccess ? <p role="status">{change.data.message}</p> : null}
      {change.isError ? (
        <p role="alert" className="login-error">
          {change.error.message}
        </p>
      ) : null}
    </form>
  );
}
