import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { Metadata } from "next";
import { headers } from "next/headers";
import { Suspense } from "react";
import { KeysView } from "@/components/keys/keys-view";
import { ErrorState } from "@/components/ui/error-state";
import { PageHeader } from "@/components/ui/page-header";
import { effectSearchQuery } from "@/lib/api/effects-query";
import { ApiError } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { readEffectAudited, searchEffectsAudited } from "@/lib/auth/audited-reads";
import { clientIpOf } from "@/lib/auth/client-ip";
import { requirePageScope } from "@/lib/auth/page-session";
import { keysPageParams } from "@/lib/console/keys-params";
import {
  type KeysViewParams,
  keyDetailQueryKey,
  keyDetailUrl,
  keysSearchQueryKey,
  keysSearchUrl,
} from "@/lib/console/keys-types";

export const metadata: Metadata = { title: "Keys" };
export const dynamic = "force-dynamic";

const header = (
  <PageHeader
    title="Keys"
    description="Search a tenant's effect keys by any fragment (an order id finds every step of that order), then open one."
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
  const raw = new URLSearchParams();
  for (const [name, value] of Object.entries(await searchParams)) {
    if (typeof value === "string") raw.set(name, value);
    else if (Array.isArray(value) && value.length > 0) raw.set(name, value[value.length - 1]!);
  }
  const platform = session.tenantId === null;
  let params: KeysViewParams;
  let search: ReturnType<typeof effectSearchQuery.parse>;
  try {
    const parsed = parseSearchParams(keysPageParams, raw);
    // A tenant token always searches its own tenant; a platform token picks one.
    params = { ...parsed, tenant: session.tenantId ?? parsed.tenant };
    // The search the client will ask for, checked by the API's own rules: the same 400 text.
    search = parseSearchParams(effectSearchQuery, new URL(keysSearchUrl(params, platform), "http://console.local"));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return (
      <>
        {header}
        <ErrorState title="This link has an invalid filter" message={error.message} code={error.code} />
      </>
    );
  }

  const queryClient = new QueryClient();
  const tenant = params.tenant;
  if (tenant !== undefined) {
    const ip = clientIpOf(await headers());
    const { key } = params;
    // A failure is not thrown (prefetchQuery keeps it out of the cache): the client asks again
    // and shows its error state, or "No such key" for a key the tenant does not have.
    await Promise.all([
      queryClient.prefetchQuery({
        queryKey: keysSearchQueryKey(keysSearchUrl(params, platform)),
        queryFn: () => searchEffectsAudited({ principal: session, scope, search: { ...search, tenant }, ip }),
      }),
      key === undefined
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
  }

  return (
    <>
      {header}
      <HydrationBoundary state={dehydrate(queryClient)}>
        <Suspense key={raw.toString()} fallback={<p role="status">Loading…</p>}>
          <KeysView
            key={raw.toString()}
            params={params}
            session={{ role: session.role, tenantId: session.tenantId, actor: session.actor }}
          />
        </Suspense>
      </HydrationBoundary>
    </>
  );
}
