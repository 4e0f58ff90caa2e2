import type { Metadata } from "next";
import { GapFilters } from "@/components/gaps/gap-filters";
import { GapsView } from "@/components/gaps/gaps-view";
import { ErrorState } from "@/components/ui/error-state";
import { gapsQueryKey } from "@/lib/features/retention-and-gaps/gaps-types";
import { getGaps } from "@/lib/features/retention-and-gaps/get-gaps";
import { gapsPageQuery } from "@/lib/routes/page-queries";
import { declarePage } from "../_shared/declare-page";

export const metadata: Metadata = { title: "Delivery gaps" };
export const dynamic = "force-dynamic";

export default declarePage({
  title: "Delivery gaps",
  description:
    "How late duplicates arrive after their effect was first claimed, and whether the retention keeps records long enough to recognise them.",
  query: gapsPageQuery,
  invalid: ({ invalid }) => (
    <div className="gaps" data-testid="gaps-invalid">
      <GapFilters params={invalid.typed} jobTypes={[]} />
      <ErrorState title="Invalid filter in the URL" message={invalid.message} code={invalid.code} />
    </div>
  ),
  prefetch: ({ scope, values, query }) => [{ queryKey: gapsQueryKey(values.toString()), queryFn: () => getGaps(scope, query) }],
  suspense: { key: ({ values }) => values.toString(), fallback: <p role="status">Loading delivery gaps…</p> },
  render: ({ principal, scope, values }) => (
    <GapsView
      search={values.toString()}
      params={Object.fromEntries(values)}
      canApply={principal.role === "admin" && scope.platform}
    />
  ),
});
