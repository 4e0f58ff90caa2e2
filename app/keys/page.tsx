import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { Metadata } from "next";
import { headers } from "next/headers";
import { Suspense } from "react";
import { KeysView } from "@/components/keys/keys-view";
import { PageHeader } from "@/components/ui/page-header";
import { ApiError } from "@/lib/api/errors";
import { clientIpOf } from "@/lib/auth/client-ip";
import { requirePageScope } from "@/lib/auth/page-session";
import { readEffectAudited, searchEffectsAudited } from "@/lib/features/keys-and-effects/audited-reads";
import type { effectSearchQuery } from "@/lib/features/keys-and-effects/contract";
import {
  type KeysViewParams,
  keyDetailQueryKey,
  keyDetailUrl,
  keysSearchQueryKey,
  keysSearchUrl,
} from "@/lib/features/keys-and-effects/keys-types";
import { invalidPageQuery, lastValues, parseKeysPageQuery } from "@/lib/routes/page-queries";

export const metadata: Metadata = { title: "Keys" };
export const dynamic = "force-dynamic";

const header = (
  <PageHeader
    title="Keys"
    description="Search effect keys by any fragment (an order id finds every step of that order), then open one."
  />
);

/**
 * "Did order X run twice?": search a tenant's effect keys by fragment, open one, release a stuck
 * claim. The URL is parsed here, as the API parses it, and the search and the opened key are read
 * here (audited, as the API audits them) into TanStack Query under the keys the client uses: the
 * first HTML of a deep link already holds the results and the verdict, and the client keeps them
 * fresh from there.
 */
export default async function KeysPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { principal: session, scope } = await requirePageScope("viewer");
  const raw = lastValues(await searchParams);
  const platform = session.tenantId === null;
  const sessionView = { role: session.role, tenantId: session.tenantId, actor: session.actor };
  let params: KeysViewParams;
  let search: ReturnType<typeof effectSearchQuery.parse>;
  try {
    ({ params, search } = parseKeysPageQuery(raw, session));
  } catch (error) {
    // The form stays, with what was typed, and the error beside it.
    return (
      <>
        {header}
        <KeysView params={{}} invalid={invalidPageQuery(raw, error)} session={sessionView} />
      </>
    );
  }

  const queryClient = new QueryClient();
  const tenant = params.tenant;
  const ip = clientIpOf(await headers());
  const { key } = params;
  // A failure is not thrown (prefetchQuery keeps it out of the cache): the client asks again
  // and shows its error state, or "No such key" for a key the tenant does not have. A platform
  // session naming no tenant searches every tenant.
  await Promise.all([
    queryClient.prefetchQuery({
      queryKey: keysSearchQueryKey(keysSearchUrl(params, platform)),
      queryFn: () => searchEffectsAudited({ principal: session, scope, search: { ...search, tenant }, ip }),
    }),
    key === undefined || tenant === undefined
      ? undefined
      : queryClient.prefetchQuery({
          queryKey: keyDetailQueryKey(keyDetailUrl(tenant, key, platform)),
          queryFn: async () => {
            const detail = await readEffectAudited({ principal: session, scope, tenant, key, ip });
            if (!detail) throw new ApiError("NOT_FOUND", "no effect with this key");
            return detail;
          },
        }),
  ]);

  return (
    <>
      {header}
      <HydrationBoundary state={dehydrate(queryClient)}>
        <Suspense key={raw.toString()} fallback={<p role="status">Loading…</p>}>
          <KeysView key={raw.toString()} params={params} session={sessionView} />
        </Suspense>
      </HydrationBoundary>
    </>
  );
}
