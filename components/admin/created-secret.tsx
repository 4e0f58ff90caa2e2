"use client";

import { useState } from "react";
import type { CreatedTokenResponse } from "@/lib/features/tokens-and-sessions/contract";

/** The new token's secret, shown this once: the server keeps only its hash. */
export function CreatedSecret({ created, onDismiss }: { created: CreatedTokenResponse; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    // A success, not an error: a plain .banner is the danger tone.
    <div className="banner banner-stacked" data-tone="success" role="status" data-testid="created-secret">
      <p>
        Token <strong>{created.token.name}</strong> created. Copy its secret now: it is shown this once and cannot be read again.
      </p>
      <p>
        <code data-testid="token-secret">{created.secret}</code>{" "}
        <button
          type="button"
          className="button button-quiet"
          onClick={() => {
            void navigator.clipboard?.writeText(created.secret).then(() => setCopied(true));
          }}
        >
          {copied ? "Copied" : "Copy"}
        </button>{" "}
        <button type="button" className="button button-quiet" onClick={onDismiss}>
          Done
        </button>
      </p>
    </div>
  );
}
