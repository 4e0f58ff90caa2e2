"use client";

import { ErrorState } from "@/components/ui/states";

export default function KeysError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return <ErrorState title="The Keys page failed to load" message={error.message} onRetry={reset} />;
}
