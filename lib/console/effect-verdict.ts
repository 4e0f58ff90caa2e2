/** Seconds as people say them: "49 s", "12 min", "5 h", "3 d". */
export function humanSeconds(seconds: number): string {
  if (seconds < 90) return `${Math.max(0, Math.round(seconds))} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

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
          : `completed on attempt ${n} (${n - 1} earlier attempt${n > 2 ? "s" : ""} failed or ${e.policy === "external" ? "were taken over; the provider key keeps the third party to one effect" : "were taken over"})`;
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
  const dup = `${e.duplicateCount} duplicate${e.duplicateCount === 1 ? "" : "s"} suppressed`;
  const gap = e.lastDuplicateGapSeconds === null ? "" : `, last ${humanSeconds(e.lastDuplicateGapSeconds)} after the first`;
  return `${ran}, ${dup}${gap}`;
}
