import type { RetentionView } from "@/lib/features/retention-and-gaps/contract";
import { formatDuration, formatUtc } from "@/lib/format";

/** The retention settings and what bounds them: observed gaps, live retry windows, the runway (a platform view: it has the plan). */
export function SettingsSection({ data }: { data: RetentionView & { plan: NonNullable<RetentionView["plan"]> } }) {
  const { settings, plan } = data;
  const largestWindow = data.liveWorkers.reduce((max, w) => Math.max(max, w.maxRetryWindowSeconds), 0);
  return (
    <section className="panel" aria-labelledby="retention-settings">
      <div className="panel-header">
        <h2 id="retention-settings">Settings</h2>
        <span className="panel-meta">
          {settings.updatedBy ? `changed by ${settings.updatedBy} ${formatUtc(settings.updatedAt)}` : "defaults"}
        </span>
      </div>
      <dl className="retention-facts">
        <div>
          <dt>Retention</dt>
          <dd data-testid="retention-days">{settings.retentionDays} d</dd>
        </div>
        <div>
          <dt>Observed maximum gap</dt>
          <dd title="Largest redelivery gap seen on any effect; the gaps advisor's recommendation replaces it">
            {data.observedMaxGapSeconds === null ? "none yet" : formatDuration(data.observedMaxGapSeconds)}
          </dd>
        </div>
        <div>
          <dt>Largest live retry window</dt>
          <dd>{largestWindow > 0 ? formatDuration(largestWindow) : `none (settings: ${settings.maxRetryWindowDays} d)`}</dd>
        </div>
        <div>
          <dt>Interval / premade</dt>
          <dd>
            {settings.partitionInterval} × {settings.premakeCount}
          </dd>
        </div>
        <div>
          <dt>Runway</dt>
          <dd data-testid="runway">{formatDuration(plan.runwayHours * 3600)}</dd>
        </div>
        <div>
          <dt>Nothing dropped after</dt>
          <dd>{formatUtc(plan.dropBefore)}</dd>
        </div>
      </dl>
    </section>
  );
}
