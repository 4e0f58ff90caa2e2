import type { Gaps } from "@/lib/features/retention-and-gaps/gaps-contract";
import { formatCount, formatDuration } from "@/lib/format";
import { AdviceApply } from "./advice-apply";
import { ProviderWindows } from "./provider-windows";

/** The advice's own query for the range and job type the page shows (GET /api/v1/retention/advice/preview). */
function adviceSearchOf(gaps: Gaps): string {
  const days = Math.round((Date.parse(gaps.to) - Date.parse(gaps.from)) / 86_400_000);
  const search = new URLSearchParams({ window: String(Math.min(90, Math.max(1, days))) });
  if (gaps.jobType) search.set("jobType", gaps.jobType);
  return search.toString();
}

/**
 * Why the advisor's late count and the page's late list may differ: the advisor counts duplicate
 * deliveries whose gap is longer than the retention (each would have run as new work once
 * pruned); the list and the tenants panel count effects whose longest gap is past the retry window
 * (the provider may have retried on its own by then), a shorter threshold, so they can list more.
 */
function lateNote(gaps: Gaps): string {
  const c = gaps.advice.comparison;
  const listed = gaps.latestLate.length;
  return `Counted against the ${formatDuration(c.retentionSeconds)} retention: duplicate deliveries in the window whose gap is longer than it. "Latest late duplicates" below lists effects whose longest gap exceeds the ${formatDuration(gaps.lateThresholdSeconds)} retry window${listed > 0 ? ` (${formatCount(listed)} shown)` : ""}, a ${gaps.lateThresholdSeconds < c.retentionSeconds ? "shorter" : "different"} threshold, so the two numbers need not agree.`;
}

/**
 * The advisor's recommendation beside the current retention; red when the retention is below an
 * observed gap. `canApply`: a platform admin, who may apply it (components/gaps/advice-apply.tsx).
 */
export function AdvicePanel({ gaps, canApply }: { gaps: Gaps; canApply: boolean }) {
  const { advice } = gaps;
  const c = advice.comparison;
  const red = c.verdict === "below_observed_max";
  return (
    <section
      className={`panel advice ${red ? "advice-danger" : c.verdict === "below_recommendation" ? "advice-warning" : ""}`}
      aria-labelledby="advice-heading"
      data-testid="advice"
      data-verdict={c.verdict}
    >
      <div className="panel-header">
        <h2 id="advice-heading">Retention advice</h2>
        <span className="panel-meta">
          {advice.inputs.basis} × {advice.inputs.safetyFactor}
          {advice.inputs.deadLetterDwellSeconds ? ` + ${formatDuration(advice.inputs.deadLetterDwellSeconds)} dwell` : ""}, whole{" "}
          {formatDuration(advice.inputs.partitionSeconds)} partitions
        </span>
      </div>
      <div className="panel-body advice-body">
        <dl className="advice-numbers">
          <div>
            <dt>Recommended</dt>
            <dd data-testid="advice-recommended">
              {advice.status === "recommended" ? formatDuration(advice.recommendedSeconds) : "no recommendation"}
            </dd>
          </div>
          <div>
            <dt>Current retention</dt>
            <dd className={red ? "text-danger" : undefined} data-testid="advice-retention">
              {formatDuration(c.retentionSeconds)}
            </dd>
          </div>
          <div>
            <dt>Longest observed gap</dt>
            <dd className={red ? "text-danger" : undefined}>
              {c.observedMaxSeconds === null ? "—" : `${c.observedMaxExact ? "" : "> "}${formatDuration(c.observedMaxSeconds)}`}
            </dd>
          </div>
          <div>
            <dt>Largest declared retry window</dt>
            <dd>{formatDuration(advice.inputs.maxRetryWindowSeconds)}</dd>
          </div>
          <div>
            <dt>Duplicates later than the retention</dt>
            <dd className={c.lateDuplicates > 0 ? "text-danger" : undefined} data-testid="advice-late">
              {formatCount(c.lateDuplicates)}
              {c.lateDuplicatesUpTo > c.lateDuplicates ? ` (up to ${formatCount(c.lateDuplicatesUpTo)})` : ""}
            </dd>
          </div>
        </dl>
        <p className="muted" data-testid="advice-late-note">
          {lateNote(gaps)}
        </p>
        <p className={red ? "banner banner-danger" : "muted"} role={red ? "alert" : undefined} data-testid="advice-verdict">
          {c.message}
        </p>
        {c.observedMaxSource ? <p className="muted">Longest gap: {c.observedMaxSource}.</p> : null}
        {advice.status === "recommended" ? <AdviceApply canApply={canApply} adviceSearch={adviceSearchOf(gaps)} /> : null}
        <ProviderWindows providers={advice.providers} />
        <p className="muted" data-testid="claims-beyond-retention">
          Claims of deliveries published before the retention (unrecognisable once pruned):{" "}
          <strong>{formatCount(c.claimsBeyondRetention)}</strong>
        </p>
        {advice.refusals.length > 0 ? (
          <div data-testid="advice-refusals">
            <h3>Why there is no recommendation</h3>
            <ul>
              {advice.refusals.map((r) => (
                <li key={`${r.code}:${r.jobType ?? ""}`}>
                  <code>{r.code}</code> {r.message}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        <ol className="advice-reasons">
          {advice.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ol>
        <p className="muted">
          Retry window from {advice.inputs.maxRetryWindowSource}. Percentiles are interpolated inside histogram buckets, as
          Prometheus&apos; histogram_quantile does.
        </p>
      </div>
    </section>
  );
}
