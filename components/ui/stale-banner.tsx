import { formatUtcClock } from "@/lib/format";
import { describeApiError } from "./describe-api-error";

/** Shown over data kept from an earlier answer when the latest refresh failed. */
export function StaleBanner({
  error,
  updatedAt,
  onRetry,
  what,
}: {
  error: unknown;
  updatedAt: number;
  onRetry: () => void;
  what: string;
}) {
  return (
    <div className="banner" data-tone="danger" role="alert" data-testid="stale-banner">
      <span>
        The last refresh failed ({describeApiError(error, what).message}). Showing data from {formatUtcClock(updatedAt)}.
      </span>
      <button type="button" className="button button-quiet" onClick={onRetry}>
        Retry
      </button>
    </div>
  );
}
