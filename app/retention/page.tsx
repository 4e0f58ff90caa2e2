import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { RetentionPanel } from "@/components/retention/retention-panel";
import { ErrorState } from "@/components/ui/error-state";
import { PageHeader } from "@/components/ui/page-header";
import { Skeleton } from "@/components/ui/skeleton";
import { ApiError } from "@/lib/api/errors";
import { DEFAULT_RETENTION_RUNS, parseRetentionQuery, type RetentionQuery } from "@/lib/api/retention-query";
import { requirePageScope } from "@/lib/auth/page-session";
import { getRetention } from "@/lib/retention/get-retention";
import { retentionQueryKey } from "@/lib/retention/retention-types";

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
    if (!(error instanceof ApiError)) throw error;
    // The same words as the API's 400: the address is wrong, and nothing is silently replaced.
    return (
      <>
        {header}
        <ErrorState title="This view's address is invalid" message={error.message} code={error.code} />
        <p>
          <Link href="/retention" className="button">
            Open the default view
          </Link>
        </p>
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
