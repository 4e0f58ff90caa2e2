"use client";

import { useEffect } from "react";
import { ErrorState } from "./error-state";
import { PageHeader } from "./page-header";

export interface RouteErrorProps {
  error: unknown;
  /** Next's error boundary hands over `retry` (re-fetches the segment); older builds call it `reset`. */
  retry?: () => void;
  reset?: () => void;
}

/**
 * What every route's error.tsx shows when a page threw while rendering: data errors are shown by
 * the page's own states, so this is the last resort, with the digest that finds it in the log.
 */
export function RouteError({ error, retry, reset, page }: RouteErrorProps & { page?: string }) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  const digest =
    typeof error === "object" && error && "digest" in error ? String((error as { digest?: string }).digest) : undefined;
  return (
    <>
      {page ? <PageHeader title={page} /> : null}
      <ErrorState
        title={page ? `The ${page} page failed to render` : "This page failed to render"}
        message="Retrying reloads it from the server; if it keeps failing, the console server's log has the details."
        code={digest}
        onRetry={retry ?? reset}
      />
    </>
  );
}
