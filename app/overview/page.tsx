import type { Metadata } from "next";
import Link from "next/link";
import { OverviewDashboard } from "@/components/overview/overview-dashboard";
import { OverviewFilters } from "@/components/overview/overview-filters";
import { OverviewSkeleton } from "@/components/overview/overview-skeleton";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { getOverviewSeries } from "@/lib/features/overview/get-overview-series";
import { OVERVIEW_RANGES, type OverviewRange, overviewQueryKey } from "@/lib/features/overview/overview-types";
import { overviewPageQuery } from "@/lib/routes/page-queries";
import { declarePage } from "../_shared/declare-page";

export const metadata: Metadata = { title: "Overview" };
export const dynamic = "force-dynamic";

const QUERY_KEYS = ["window", "from", "to", "jobType", "tenant", "width"] as const;

/** The page's own parameters, in a fixed order: the API query string and the TanStack Query key. */
function canonical(values: URLSearchParams): string {
  const out = new URLSearchParams();
  for (const key of QUERY_KEYS) {
    const value = values.get(key);
    if (value !== null) out.set(key, value);
  }
  return out.toString();
}

export default declarePage({
  title: "Overview",
  description:
    "Is it rising now, since when, which tenant, is an alert firing: duplicates suppressed, uncaught violations, stuck claims and workers.",
  query: overviewPageQuery,
  // The same words as the API's 400, beside the filters as typed: nothing is silently replaced.
  invalid: ({ invalid: { typed, ...invalid } }) => (
    <>
      <div className="toolbar">
        <OverviewFilters
          range={OVERVIEW_RANGES.find((r): r is OverviewRange => r === typed.window) ?? null}
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
  ),
  prefetch: ({ scope, values, query }) => [
    { queryKey: overviewQueryKey(canonical(values)), queryFn: () => getOverviewSeries(scope, query) },
  ],
  suspense: { key: ({ values }) => canonical(values), fallback: <OverviewSkeleton /> },
  render: ({ values }) => <OverviewDashboard apiQuery={canonical(values)} />,
});
