import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { Metadata } from "next";
import { headers } from "next/headers";
import { Suspense } from "react";
import { FindingFilters as FindingFiltersForm } from "@/components/reconciliation/finding-filters";
import { ReconciliationView } from "@/components/reconciliation/reconciliation-view";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { PageHeader } from "@/components/ui/page-header";
import { ApiError } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { clientIpOf } from "@/lib/auth/client-ip";
import { requirePageScope } from "@/lib/auth/page-session";
import { readFindingAudited } from "@/lib/features/reconciliation/audited-reads";
import { findingsQuery } from "@/lib/features/reconciliation/contract";
import { listFindings } from "@/lib/features/reconciliation/list-findings";
import { listReconciliationRuns } from "@/lib/features/reconciliation/list-reconciliation-runs";
import { readProviderSetup } from "@/lib/features/reconciliation/provider-setup";
import {
  type FindingFilters,
  findingQueryKey,
  findingSearch,
  findingsApiUrl,
  findingsQueryKey,
  runsQueryKey,
} from "@/lib/features/reconciliation/reconciliation-types";
import { invalidPageQuery } from "@/lib/routes/page-queries";

export const metadata: Metadata = { title: "Reconciliation" };
export const dynamic = "force-dynamic";

const KEYS = ["tenant", "kind", "provider", "jobType", "state", "from", "to", "cursor", "limit", "finding"] as const;

const header = (
  <PageHeader
    title="Reconciliation"
    description="Onceboard's records against the provider's own: a charge made twice at the provider, a completed effect the provider never received, an object no claim made."
  />
);

/**
 * "Ran once here, and charged once at the provider?": the runs, the findings for the URL's
 * filters (parsed by the API's own rules) and the open finding, read for the session's scope into
 * TanStack Query under the keys the client asks with, so the first HTML already holds them.
 */
export default async function ReconciliationPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { principal, scope } = await requirePageScope("viewer");
  const raw = await searchParams;
  const filters: FindingFilters = {};
  for (const k of KEYS) {
    const v = raw[k];
    const value = Array.isArray(v) ? v.at(-1) : v;
    // A tenant session reads its own tenant whatever ?tenant= says: its links do not name another.
    if (value && !(k === "tenant" && !scope.platform)) filters[k] = value;
  }
  let query: ReturnType<typeof findingsQuery.parse>;
  try {
    query = parseSearchParams(findingsQuery, new URLSearchParams(findingSearch(filters)));
  } catch (error) {
    // The filters as typed and the error beside them; nothing is read for a link that names no list.
    const invalid = invalidPageQuery(new URLSearchParams(findingSearch(filters)), error);
    return (
      <>
        {header}
        <FindingFiltersForm filters={invalid.typed} platform={scope.platform} />
        <InvalidQueryAlert invalid={invalid} />
      </>
    );
  }
  const queryClient = new QueryClient();
  // A failed prefetch is not cached as data: the client asks again and shows the error state
  // (a cursor this API never returned included).
  await Promise.all([
    queryClient.prefetchQuery({ queryKey: runsQueryKey(), queryFn: () => listReconciliationRuns(scope, { limit: 20 }) }),
    queryClient.prefetchQuery({
      queryKey: findingsQueryKey(findingsApiUrl(filters)),
      queryFn: () => listFindings(scope, query),
    }),
    query.finding === undefined
      ? undefined
      : queryClient.prefetchQuery({
          queryKey: findingQueryKey(query.finding),
          queryFn: async () => {
            const finding = await readFindingAudited({
              principal,
              scope,
              id: query.finding as string,
              ip: clientIpOf(await headers()),
            });
            if (!finding) throw new ApiError("NOT_FOUND", "no finding with this id");
            return finding;
          },
        }),
  ]);
  return (
    <>
      {header}
      <HydrationBoundary state={dehydrate(queryClient)}>
        <Suspense key={findingSearch(filters)} fallback={<p role="status">Loading reconciliation…</p>}>
          <ReconciliationView
            filters={filters}
            platform={scope.platform}
            role={principal.role}
            setup={readProviderSetup({ platform: scope.platform })}
          />
        </Suspense>
      </HydrationBoundary>
    </>
  );
}
