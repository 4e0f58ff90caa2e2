import type { Metadata } from "next";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { ViolationFilters } from "@/components/violations/violation-filters";
import { ViolationsTable } from "@/components/violations/violations-table";
import { getViolationTotals } from "@/lib/features/violations/get-violation-groups";
import { listViolations } from "@/lib/features/violations/list-violations";
import { violationsPageQuery } from "@/lib/routes/page-queries";
import { declarePage } from "../_shared/declare-page";

export const metadata: Metadata = { title: "Violations" };
export const dynamic = "force-dynamic";

/**
 * The list behind the Overview's violations banner, read the way GET /api/v1/violations reads it,
 * for the session's tenant (a platform session: every tenant, or ?tenant=).
 */
export default declarePage({
  title: "Uncaught violations",
  description:
    "Every unique violation a handler raised with its own writes (a duplicate got past its guard), one row per affected key.",
  query: violationsPageQuery,
  invalid: ({ scope, invalid }) => (
    <>
      <ViolationFilters filters={invalid.typed} platform={scope.platform} />
      <InvalidQueryAlert invalid={invalid} />
    </>
  ),
  // The list and its totals with one filter at one instant: the total is the rows the list pages through.
  load: async ({ scope, query }) => {
    const now = new Date();
    const [list, totals] = await Promise.all([
      listViolations(scope, { ...query, now }),
      getViolationTotals(scope, { ...query, now }),
    ]);
    return { list, totals };
  },
  render: ({ scope, query, values, data }) => {
    const { jobType = null, constraint = null } = query;
    const tenant = scope.platform ? (query.tenant ?? null) : null;
    const [from, to, limit] = [values.get("from"), values.get("to"), values.get("limit")];
    return (
      <ViolationsTable
        list={data.list}
        totals={data.totals}
        filters={{ tenant, jobType, constraint, from, to, limit }}
        platform={scope.platform}
      />
    );
  },
});
