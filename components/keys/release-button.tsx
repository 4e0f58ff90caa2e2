"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { postJson } from "@/components/api/fetch-json";
import type { ReleaseResponse } from "@/lib/features/keys-and-effects/contract";
import { KEYS_SEARCH_QUERY_ROOT, keyDetailQueryKey } from "@/lib/features/keys-and-effects/keys-types";
import { OVERVIEW_QUERY_ROOT } from "@/lib/features/overview/overview-types";

/** Release a claim after a confirmation: the next delivery runs the job again. */
export function ReleaseButton({ url, effectKey }: { url: string; effectKey: string }) {
  const [confirming, setConfirming] = useState(false);
  const client = useQueryClient();
  const release = useMutation({
    mutationFn: () => postJson<ReleaseResponse>(url),
    // A release changes this key, the searches listing it and the Overview's stuck claims; nothing else.
    onSettled: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: keyDetailQueryKey(url) }),
        client.invalidateQueries({ queryKey: [KEYS_SEARCH_QUERY_ROOT] }),
        client.invalidateQueries({ queryKey: [OVERVIEW_QUERY_ROOT] }),
      ]),
  });
  return (
    <div className="release" data-testid="release">
      {release.isSuccess ? (
        <p role="status">{release.data.message}</p>
      ) : release.isError ? (
        <p role="alert" className="login-error">
          {release.error.message}
        </p>
      ) : null}
      {!confirming ? (
        <button type="button" className="button" onClick={() => setConfirming(true)}>
          Release claim…
        </button>
      ) : (
        <div role="alertdialog" aria-label="Confirm release" className="release-confirm">
          <p>
            Release <code>{effectKey}</code>? The next delivery runs it again (attempt + 1). Do this only if its worker is gone.
          </p>
          <button
            type="button"
            className="button"
            onClick={() => {
              setConfirming(false);
              release.mutate();
            }}
          >
            Confirm release
          </button>{" "}
          <button type="button" className="button-quiet" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
    </div>
  );
}
