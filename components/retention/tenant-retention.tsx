import type { RetentionView } from "@/lib/features/retention-and-gaps/contract";
import { formatDuration } from "@/lib/format";

/**
 * What a tenant token sees (the API's view with plan null): how long its keys are kept and the
 * largest gap its own effects saw. Partitions, the plan, live workers and maintenance runs span
 * every tenant, and the page says so instead of showing them.
 */
export function TenantRetention({
  settings,
  observedMaxGapSeconds,
}: {
  settings: RetentionView["settings"];
  observedMaxGapSeconds: number | null;
}) {
  return (
    <div className="retention">
      <section className="panel" aria-labelledby="retention-settings">
        <div className="panel-header">
          <h2 id="retention-settings">Settings</h2>
        </div>
        <dl className="retention-facts">
          <div>
            <dt>Retention</dt>
            <dd data-testid="retention-days">{settings.retentionDays} d</dd>
          </div>
          <div>
            <dt>Max retry window</dt>
            <dd>{settings.maxRetryWindowDays} d</dd>
          </div>
          <div>
            <dt>Largest gap on your effects</dt>
            <dd>{observedMaxGapSeconds === null ? "none yet" : formatDuration(observedMaxGapSeconds)}</dd>
          </div>
        </dl>
      </section>
      <p className="panel-empty" data-testid="retention-platform-only">
        Partitions, the maintenance plan, live workers and maintenance runs cover every tenant&apos;s effects: they are shown to
        platform tokens only.
      </p>
    </div>
  );
}
