"use client";

import { useEffect, useState } from "react";

/**
 * A one-time login link carries its code in the fragment (/login#code=…): never sent to a server,
 * never in an access log. This reads it, removes it from the address bar, and exchanges it once.
 */
export function LoginCode({ next }: { next: string }) {
  const [state, setState] = useState<"idle" | "working" | "refused">("idle");
  useEffect(() => {
    // A link pasted into a tab already on /login changes only the fragment: no navigation, no
    // new mount. So the code is read on mount and on every hashchange.
    const exchange = () => {
      const match = /(?:^#|&)code=([A-Za-z0-9_-]+)/.exec(window.location.hash);
      if (!match) return;
      history.replaceState(null, "", window.location.pathname + window.location.search);
      setState("working");
      fetch("/api/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code: match[1] }),
      }).then(
        (response) => (response.ok ? window.location.replace(next) : setState("refused")),
        () => setState("refused"),
      );
    };
    exchange();
    window.addEventListener("hashchange", exchange);
    return () => window.removeEventListener("hashchange", exchange);
  }, [next]);
  if (state === "working") return <p role="status">Signing in with your link…</p>;
  if (state === "refused")
    return (
      <p className="login-error" role="alert">
        This login link is used, expired or unknown. Ask for a new one (<code>npm run token -- link &lt;id&gt;</code>) or paste a
        token.
      </p>
    );
  return null;
}
