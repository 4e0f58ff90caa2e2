import { formatCountOf, formatDuration } from "../../format";

/**
 * "Did this run twice?" in one line: how the effect ran, then its duplicates, e.g.
 * "ran once, 3 duplicates suppressed, last 49 s after the first".
 */
export function effectVerdict(e: {
  status: string;
  policy: string;
  attempts: number;
  duplicateCount: number;
  lastDuplicateGapSeconds: number | null;
  stuck: boolean;
}): string {
  const n = e.attempts;
  let ran: string;
  switch (e.status) {
    case "completed":
      ran =
        n <= 1
          ? "ran once"
          : `completed on attempt ${n} (${formatCountOf(n - 1, "earlier attempt")} failed or ${e.policy === "external" ? "were taken over; the provider key keeps the third party to one effect" : "were taken over"})`;
      break;
    case "in_progress":
      ran = e.stuck ? `stuck: attempt ${n}'s lease expired before it finished` : `running now (attempt ${n})`;
      break;
    case "failed":
      ran = `failed on attempt ${n}; the next delivery retries it`;
      break;
    case "abandoned":
      ran = "abandoned: an at-most-once step whose worker died mid-step; never run again";
      break;
    default:
      ran = e.status;
  }
  if (e.duplicateCount === 0) return `${ran}, no duplicates`;
  const dup = `${formatCountOf(e.duplicateCount, "duplicate")} suppressed`;
  const gap =
    e.lastDuplicateGapSeconds === null
      ? ""
      : `, last ${formatDuration(e.lastDuplicateGapSeconds, { whole: true })} after the first`;
  return `${ran}, ${dup}${gap}`;
}
