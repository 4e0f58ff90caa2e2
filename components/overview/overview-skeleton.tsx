import { Skeleton } from "../ui/skeleton";

/** The Overview's shape while it loads: tiles, two panels, a table. */
export function OverviewSkeleton() {
  return (
    <div className="overview" aria-busy="true">
      <p className="sr-only" role="status">
        Loading the overview…
      </p>
      <div className="stat-grid">
        {Array.from({ length: 6 }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: static placeholders
          <div className="stat" key={i}>
            <Skeleton className="skeleton-label" />
            <Skeleton className="skeleton-value" />
          </div>
        ))}
      </div>
      <div className="panel-grid">
        <div className="panel">
          <Skeleton className="skeleton-heading" />
          <Skeleton className="skeleton-chart" />
        </div>
        <div className="panel">
          <Skeleton className="skeleton-heading" />
          <Skeleton className="skeleton-chart" />
        </div>
      </div>
      <div className="panel">
        <Skeleton className="skeleton-heading" />
        {Array.from({ length: 4 }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: static placeholders
          <Skeleton className="skeleton-row" key={i} />
        ))}
      </div>
    </div>
  );
}
