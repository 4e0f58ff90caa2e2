import type { Metadata } from "next";
import { FindingFilters } from "@/components/reconciliation/finding-filters";
import { ReconciliationView } from "@/components/reconciliation/reconciliation-view";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { ApiError } from "@/lib/api/errors";
import { readFindingAudited } from "@/lib/features/reconciliation/audited-reads";
import { listFindings } from "@/lib/features/reconciliation/list-findings";
import { listReconciliationWindows } from "@/lib/features/reconciliation/list-reconciliation-windows";
import { readProviderSetup } from "@/lib/features/reconciliation/provider-setup";
import {
  asFirstPage,
  findingQueryKey,
  findingSearch,
  findingsApiUrl,
  findingsQueryKey,
  WINDOWS_FIRST_PAGE,
  windowsQueryKey,
} from "@/lib/features/reconciliation/reconciliation-types";
import { reconciliationPageQuery } from "@/lib/routes/page-queries";
import { declarePage } from "../_shared/declare-page";

export const metadata: Metadata = { title: "Reconciliation" };
export const dynamic = "force-dynamic";

/**
 * "Ran once here, and charged once at the provider?": the reconciled windows (each by its latest
 * run), the findings for the URL's filters and the open finding (audited like a key read), read
 * for the session's scope.
 */
export default declarePage({
  title: "Reconciliation",
  description:
    "Onceboard's records against the provider's own: a charge made twice at the provider, a completed effect the provider never received, an object no claim made.",
  query: reconciliationPageQuery,
  invalid: ({ scope, invalid }) => (
    <>
      <FindingFilters filters={invalid.typed} platform={scope.platform} />
      <InvalidQueryAlert invalid={invalid} />
    </>
  ),
  prefetch: ({ principal, scope, ip, query: { filters, query } }) => [
    {
      queryKey: windowsQueryKey(),
      queryFn: async () => asFirstPage(await listReconciliationWindows(scope, { limit: WINDOWS_FIRST_PAGE })),
    },
    { queryKey: findingsQueryKey(findingsApiUrl(filters)), queryFn: () => listFindings(scope, query) },
    query.finding === undefined
      ? undefined
      : {
          queryKey: findingQueryKey(query.finding),
          queryFn: async () => {
            const finding = await readFindingAudited({ principal, scope, id: query.finding as string, ip });
            if (!finding) throw new ApiError("NOT_FOUND", "no finding with this id");
            return finding;
          },
        },
  ],
  // Opening a finding is not a new list: the boundary (and the list's scroll, its folds) stays.
  suspense: {
    key: ({ query }) => findingSearch({ ...query.filters, finding: null }),
    fallback: <p role="status">Loading reconciliation…</p>,
  },
  render: ({ principal, scope, query }) => (
    <ReconciliationView
      filters={query.filters}
      platform={scope.platform}
      role={principal.role}
      setup={readProviderSetup({ platform: scope.platform })}
    />
  ),
});
