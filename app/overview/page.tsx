import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { OverviewDashboard } from "@/components/overview/overview-dashboard";
import { OverviewFilters } from "@/components/overview/overview-filters";
import { OverviewSkeleton } from "@/components/overview/overview-skeleton";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { PageHeader } from "@/components/ui/page-header";
import { parseSearchParams } from "@/lib/api/parse";
import { requirePageScope } from "@/lib/auth/page-session";
import { type OverviewQuery, overviewQuery } from "@/lib/features/overview/contract";
import { getOverviewSeries } from "@/lib/features/overview/get-overview-series";
import { OVERVIEW_RANGES, type OverviewRange, overviewQueryKey } from "@/lib/features/overview/overview-types";
import { invalidPageQuery } from "@/lib/routes/page-queries";

export const metadata: Metadata = { title: "Overview" };
export const dynamic = "force-dynamic";

const QUERY_KEYS = ["window", "from", "to", "jobType", "tenant", "width"] as const;

/** The page's own parameters, in a fixed order: the API query string and the TanStack Query key. */
function canonical(params: URLSearchParams): string {
  const out = new URLSearchParams();
  for (const key of QUERY_KEYS) {
    const value = params.get(key);
    if (value !== null && value !== "") out.set(key, value);
  }
  return out.toString();
}

const header = (
  <PageHeader
    title="Overview"
    description="Is it rising now, since when, which tenant, is an alert firing: duplicates suppressed, uncaught violations, stuck claims and workers."
  />
);

export default async function OverviewPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { scope } = await requirePageScope("viewer");
  const raw = await searchParams;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(raw)) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last !== undefined && last !== "") params.set(key, last);
  }
  // A tenant session reads its own tenant whatever ?tenant= says: the links and the query key do
  // not carry another tenant's name either.
  if (!scope.platform) params.delete("tenant");

  let query: OverviewQuery;
  try {
    query = parseSearchParams(overviewQuery, params);
  } catch (error) {
    // The same words as the API's 400, beside the filters as typed: nothing is silently replaced,
    // and nothing is read for a view the address does not name.
    const invalid = invalidPageQuery(params, error);
    const { typed } = invalid;
    const range = OVERVIEW_RANGES.find((r): r is OverviewRange => r === typed.window) ?? null;
    return (
      <>
        {header}
        <div className="toolbar">
          <OverviewFilters
            range={range}
            from={typed.from ?? ""}
            to={typed.to ?? ""}
            jobType={typed.jobType ?? null}
            tenant={typed.tenant ?? null}
            jobTypes={[]}
            tenants={[]}
          />
        </div>
        <InvalidQueryAlert invalid={invalid} hint="Pick a range or correct the filters above." />
        <p>
          <Link href="/overview" className="button">
            Open the default view (last 24 hours)
          </Link>
        </p>
      </>
    );
  }

  const apiQuery = canonical(params);
  const queryClient = new QueryClient();
  // A failure here is not thrown: the client asks again and shows the error state with a retry.
  // The session's scope, as the API answers it: a tenant session reads its own tenant whatever the URL says.
  await queryClient.prefetchQuery({ queryKey: overviewQueryKey(apiQuery), queryFn: () => getOverviewSeries(scope, query) });

  return (
    <>
      {header}
      <HydrationBoundary state={dehydrate(queryClient)}>
        <Suspense key={apiQuery} fallback={<OverviewSkeleton />}>
          <OverviewDashboard apiQuery={apiQuery} />
        </Suspense>
      </HydrationBoundary>
    </>
  );
}
