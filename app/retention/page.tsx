import type { Metadata } from "next";
import { RetentionPanel } from "@/components/retention/retention-panel";
import { RunCounts } from "@/components/retention/run-counts";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { Skeleton } from "@/components/ui/skeleton";
import { DEFAULT_RETENTION_RUNS } from "@/lib/features/retention-and-gaps/contract";
import { getRetention } from "@/lib/features/retention-and-gaps/get-retention";
import { retentionQueryKey } from "@/lib/features/retention-and-gaps/retention-types";
import { retentionPageQuery } from "@/lib/routes/page-queries";
import { declarePage } from "../_shared/declare-page";

export const metadata: Metadata = { title: "Retention" };
export const dynamic = "force-dynamic";

export default declarePage({
  title: "Retention",
  description:
    "Effects partitions premade ahead and expired ones detached and dropped; what keeps each one, and every maintenance run.",
  query: retentionPageQuery,
  // The one parameter is the runs table's count, chosen by links: the error stands where that table
  // would, under the counts to pick from. A tenant's view has no runs table: the error alone.
  invalid: ({ scope, invalid }) =>
    scope.platform ? (
      <section className="panel" aria-labelledby="retention-runs">
        <div className="panel-header">
          <h2 id="retention-runs">Maintenance runs</h2>
          <RunCounts shown={null} defaultShown={DEFAULT_RETENTION_RUNS} />
        </div>
        <InvalidQueryAlert invalid={invalid} hint={`This link asks for ?runs=${invalid.typed.runs ?? ""}: pick a count above.`} />
      </section>
    ) : (
      <InvalidQueryAlert invalid={invalid} hint={null} />
    ),
  prefetch: ({ scope, values, query }) => [
    { queryKey: retentionQueryKey(values.toString()), queryFn: () => getRetention(scope, query) },
  ],
  suspense: { key: ({ values }) => values.toString(), fallback: <Skeleton className="skeleton-chart" /> },
  render: ({ principal, scope, values, query }) => (
    <RetentionPanel
      canApply={principal.role === "admin" && scope.platform}
      search={values.toString()}
      runs={query.runs}
      defaultRuns={DEFAULT_RETENTION_RUNS}
    />
  ),
});
