import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { Metadata } from "next";
import { Suspense } from "react";
import { RetentionPanel } from "@/components/retention/retention-panel";
import { RunCounts } from "@/components/retention/run-counts";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { PageHeader } from "@/components/ui/page-header";
import { Skeleton } from "@/components/ui/skeleton";
import { requirePageScope } from "@/lib/auth/page-session";
import { DEFAULT_RETENTION_RUNS } from "@/lib/features/retention-and-gaps/contract";
import { getRetention } from "@/lib/features/retention-and-gaps/get-retention";
import { parseRetentionQuery, type RetentionQuery } from "@/lib/features/retention-and-gaps/retention-query";
import { retentionQueryKey } from "@/lib/features/retention-and-gaps/retention-types";
import { invalidPageQuery } from "@/lib/routes/page-queries";

export const metadata: Metadata = { title: "Retention" };
export const dynamic = "force-dynamic";

const KEYS = ["runs"] as const;

const header = (
  <PageHeader
    title="Retention"
    description="Effects partitions premade ahead and expired ones detached and dropped; what keeps each one, and every maintenance run."
  />
);

export default async function RetentionPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { principal, scope } = await requirePageScope("viewer");
  const raw = await searchParams;
  // The page's own parameters, in a fixed order: the API query string and the TanStack Query key.
  const search = new URLSearchParams();
  for (const key of KEYS) {
    const value = raw[key];
    const last = Array.isArray(value) ? value.at(-1) : value;
    if (last !== undefined && last !== "") search.set(key, last);
  }

  let query: RetentionQuery;
  try {
    query = parseRetentionQuery(search);
  } catch (error) {
    // The page's one parameter is the runs table's count, chosen by links, not a form: the error
    // stands where that table would, under the counts to pick from. Nothing is read for it, and
    // nothing is silently replaced.
    const invalid = invalidPageQuery(search, error);
    // A tenant's view has no runs table (RetentionPanel shows it its settings): the error alone.
    if (!scope.platform)
      return (
        <>
          {header}
          <InvalidQueryAlert invalid={invalid} hint={null} />
        </>
      );
    return (
      <>
        {header}
        <section className="panel" aria-labelledby="retention-runs">
          <div className="panel-header">
            <h2 id="retention-runs">Maintenance runs</h2>
            <RunCounts shown={null} defaultShown={DEFAULT_RETENTION_RUNS} />
          </div>
          <InvalidQueryAlert
            invalid={invalid}
            hint={`This link asks for ?runs=${invalid.typed.runs ?? ""}: pick a count above.`}
          />
        </section>
      </>
    );
  }

  const queryClient = new QueryClient();
  // Prefetched on the server, so the first HTML carries the partitions; a failure is not cached as
  // data: the client asks again and shows the error state with a retry.
  await queryClient.prefetchQuery({ queryKey: retentionQueryKey(search.toString()), queryFn: () => getRetention(scope, query) });
  const canApply = principal.role === "admin" && scope.platform;
  return (
    <>
      {header}
      <HydrationBoundary state={dehydrate(queryClient)}>
        <Suspense key={search.toString()} fallback={<Skeleton className="skeleton-chart" />}>
          <RetentionPanel canApply={canApply} search={search.toString()} runs={query.runs} defaultRuns={DEFAULT_RETENTION_RUNS} />
        </Suspense>
      </HydrationBoundary>
    </>
  );
}
