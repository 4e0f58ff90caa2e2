import { Skeleton } from "@/components/ui/skeleton";

export default function Loading() {
  return (
    <div className="overview" aria-busy="true">
      <p className="sr-only" role="status">
        Loading…
      </p>
      <Skeleton className="skeleton-heading" />
      <Skeleton className="skeleton-chart" />
    </div>
  );
}
