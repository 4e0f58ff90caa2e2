"use client";

import { ErrorState } from "@/components/ui/states";

export default function RetentionError({
  error,
  retry,
  reset,
}: {
  error: Error & { digest?: string };
  retry?: () => void;
  reset?: () => void;
}) {
  return (
    <ErrorState
      title="The Retention page failed to render"
      message="Retrying reloads it from the server; if it keeps failing, the console server's log has the details."
      code={error.digest}
      onRetry={retry ?? reset}
    />
  );
}
