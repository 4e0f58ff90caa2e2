import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { Metadata } from "next";
import { Suspense } from "react";
import { GapFilters, type GapsParams } from "@/components/gaps/gap-filters";
import { GapsView } from "@/components/gaps/gaps-view";
import { ErrorState } from "@/components/ui/error-state";
import { PageHeader } from "@/components/ui/page-header";
import { toApiError } from "@/lib/api/errors";
import { requirePageScope } from "@/lib/auth/page-session";
import { parseGapsQuery } from "@/lib/features/retention-and-gaps/gaps-query";
import { gapsQueryKey } from "@/lib/features/retention-and-gaps/gaps-types";
import { getGaps } from "@/lib/features/retention-and-gaps/get-gaps";

export const metadata: Metadata = { title: "Delivery gaps" };
export const dynamic = "force-dynamic";

const KEYS = ["range", "from", "to", "jobType", "tenant"] as const;

export default async function GapsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { principal, scope } = await requirePageScope("viewer");
  const raw = await searchParams;
  const params: GapsParams = {};
  const search = new URLSearchParams();
  for (const k of KEYS) {
    const v = raw[k];
    const value = Array.isArray(v) ? v.at(-1) : v;
    // A tenant session reads its own tenant whatever ?tenant= says: its links do not name another.
    if (value && !(k === "tenant" && !scope.platform)) {
      params[k] = value;
      search.set(k, value);
    }
  }
  const header = (
    <PageHeader
      title="Delivery gaps"
      description="How late duplicates arrive after their effect was first claimed, and whether the retention keeps records long enough to recognise them."
    />
  );
  let query: ReturnType<typeof parseGapsQuery>;
  try {
    query = parseGapsQuery(search);
  } catch (error) {
    const e = toApiError(error);
    // The filters stay, with what the URL said, and the error beside them (proxy.ts answers 400).
    return (
      <>
        {header}
        <div className="gaps" data-testid="gaps-invalid">
          <GapFilters params={params} jobTypes={[]} />
          <ErrorState title="Invalid filter in the URL" message={e.message} code={e.code} />
        </div>
      </>
    );
  }
  const queryClient = new QueryClient();
  // A failed prefetch is not cached as data: the client asks again and shows the error state.
  // A tenant session always sees its own tenant, as the API answers it.
  await queryClient.prefetchQuery({ queryKey: gapsQueryKey(search.toString()), queryFn: () => getGaps(scope, query) });
  return (
    <>
      {header}
      <HydrationBoundary state={dehydrate(queryClient)}>
        <Suspense key={search.toString()} fallback={<p role="status">Loading delivery gaps…</p>}>
          <GapsView search={search.toString()} params={params} canApply={principal.role === "admin" && scope.platform} />
        </Suspense>
      </HydrationBoundary>
    </>
  );
}
