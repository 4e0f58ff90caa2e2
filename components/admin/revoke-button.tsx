"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { postJson } from "@/components/api/fetch-json";
import { ADMIN_QUERY_ROOT } from "@/lib/features/tokens-and-sessions/admin-types";

/** Revoke with a confirmation step: a token or a session, by the URL of its revoke route. */
export function RevokeButton({ url, what }: { url: string; what: string }) {
  const [confirming, setConfirming] = useState(false);
  const client = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => postJson<unknown>(url),
    onSettled: () => {
      setConfirming(false);
      return client.invalidateQueries({ queryKey: [ADMIN_QUERY_ROOT] });
    },
  });
  if (revoke.isError) {
    return (
      <span role="alert" className="login-error">
        {revoke.error.message}
      </span>
    );
  }
  if (!confirming) {
    return (
      <button type="button" className="button button-quiet" onClick={() => setConfirming(true)} aria-label={`Revoke ${what}`}>
        Revoke…
      </button>
    );
  }
  return (
    <span>
      <button type="button" className="button" onClick={() => revoke.mutate()} disabled={revoke.isPending}>
        {revoke.isPending ? "Revoking…" : `Confirm revoke`}
      </button>{" "}
      <button type="button" className="button button-quiet" onClick={() => setConfirming(false)}>
        Cancel
      </button>
    </span>
  );
}
