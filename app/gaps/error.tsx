"use client";

import { useEffect } from "react";
import { ErrorState } from "@/components/ui/states";

/** A page that threw while rendering. Data errors are shown by the page itself; this is the last resort (Delivery gaps). */
export default function ErrorPage({ error, retry }: { error: unknown; retry: () => void }) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  const digest =
    typeof error === "object" && error && "digest" in error ? String((error as { digest?: string }).digest) : undefined;
  return (
    <ErrorState
      title="This page failed to render"
      message="Something went wrong while showing this page. Retrying reloads it from the server; if it keeps failing, the console server's log has the details."
      code={digest}
      onRetry={retry}
    />
  );
}
