"use client";

import { useEffect } from "react";
import { PageHeader } from "@/components/ui/page-header";
import { ErrorState } from "@/components/ui/states";

/** The Overview failed to render (data errors are shown by the page's own states; this is the last resort). */
export default function OverviewError({ error, retry }: { error: unknown; retry: () => void }) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  const digest =
    typeof error === "object" && error && "digest" in error ? String((error as { digest?: string }).digest) : undefined;
  return (
    <>
      <PageHeader title="Overview" />
      <ErrorState
        title="The Overview failed to render"
        message="Retrying reloads it from the server; if it keeps failing, the console server's log has the details."
        code={digest}
        onRetry={retry}
      />
    </>
  );
}
