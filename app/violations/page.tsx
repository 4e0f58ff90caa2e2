import type { Metadata } from "next";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { ViolationFilters } from "@/components/violations/violation-filters";
import { ViolationsTable } from "@/components/violations/violations-table";
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
  load: ({ scope, query }) => listViolations(scope, query),
  render: ({ scope, query, values, data }) => {
    const { jobType = null, constraint = null } = query;
    const tenant = scope.platform ? (query.tenant ?? null) : null;
    const [from, to, limit] = [values.get("from"), values.get("to"), values.get("limit")];
    return <ViolationsTable list={data} filters={{ tenant, jobType, constraint, from, to, limit }} platform={scope.platform} />;
  },
});
