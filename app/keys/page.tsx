import type { Metadata } from "next";
import { KeysView } from "@/components/keys/keys-view";
import { ApiError } from "@/lib/api/errors";
import type { Principal } from "@/lib/auth/auth-types";
import { readEffectAudited, searchEffectsAudited } from "@/lib/features/keys-and-effects/audited-reads";
import { keyDetailQueryKey, keyDetailUrl, keysSearchQueryKey, keysSearchUrl } from "@/lib/features/keys-and-effects/keys-types";
import { keysPageQuery } from "@/lib/routes/page-queries";
import { declarePage } from "../_shared/declare-page";

export const metadata: Metadata = { title: "Keys" };
export const dynamic = "force-dynamic";

/** What the client is told of the session: never its secret. */
const sessionView = ({ role, tenantId, actor }: Principal) => ({ role, tenantId, actor });

/**
 * "Did order X run twice?": search a tenant's effect keys by fragment, open one, release a stuck
 * claim. The search and the opened key are read here, audited as the API audits them, so the first
 * HTML of a deep link already holds the results and the verdict. A platform session naming no
 * tenant searches every tenant; a key the tenant does not have shows "No such key".
 */
export default declarePage({
  title: "Keys",
  description: "Search effect keys by any fragment (an order id finds every step of that order), then open one.",
  query: keysPageQuery,
  invalid: ({ principal, invalid }) => <KeysView params={{}} invalid={invalid} session={sessionView(principal)} />,
  prefetch: ({ principal, scope, ip, query: { params, search } }) => {
    const { tenant, key } = params;
    const platform = scope.platform;
    return [
      {
        queryKey: keysSearchQueryKey(keysSearchUrl(params, platform)),
        queryFn: () => searchEffectsAudited({ principal, scope, search: { ...search, tenant }, ip }),
      },
      key === undefined || tenant === undefined
        ? undefined
        : {
            queryKey: keyDetailQueryKey(keyDetailUrl(tenant, key, platform)),
            queryFn: async () => {
              const detail = await readEffectAudited({ principal, scope, tenant, key, ip });
              if (!detail) throw new ApiError("NOT_FOUND", "no effect with this key");
              return detail;
            },
          },
    ];
  },
  suspense: { key: ({ values }) => values.toString(), fallback: <p role="status">Loading…</p> },
  render: ({ principal, values, query }) => (
    <KeysView key={values.toString()} params={query.params} session={sessionView(principal)} />
  ),
});
