import type { Metadata } from "next";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { PageHeader } from "@/components/ui/page-header";
import { ViolationFilters } from "@/components/violations/violation-filters";
import { ViolationsTable } from "@/components/violations/violations-table";
import { parseSearchParams } from "@/lib/api/parse";
import { requirePageScope } from "@/lib/auth/page-session";
import { violationsQuery } from "@/lib/features/violations/contract";
import { listViolations } from "@/lib/features/violations/list-violations";
import type { ViolationListFilters } from "@/lib/features/violations/violations-types";
import { invalidPageQuery } from "@/lib/routes/page-queries";

export const metadata: Metadata = { title: "Violations" };
export const dynamic = "force-dynamic";

const KEYS = ["tenant", "jobType", "constraint", "from", "to", "cursor", "limit"] as const;

const header = (
  <PageHeader
    title="Uncaught violations"
    description="Every unique violation a handler raised with its own writes (a duplicate got past its guard), one row per affected key."
  />
);

/**
 * The list behind the Overview's violations banner: parsed by the API's own rules and read the
 * way GET /api/v1/violations reads it, for the session's tenant (a platform session: every tenant,
 * or ?tenant=).
 */
export default async function ViolationsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { scope } = await requirePageScope("viewer");
  const raw = await searchParams;
  const search = new URLSearchParams();
  for (const k of KEYS) {
    const v = raw[k];
    const value = Array.isArray(v) ? v.at(-1) : v;
    if (value) search.set(k, value);
  }
  // The filters as typed and the error beside them; no list is read for a link that names none.
  const invalidView = (error: unknown) => {
    const invalid = invalidPageQuery(search, error);
    return (
      <>
        {header}
        <ViolationFilters filters={invalid.typed} platform={scope.platform} />
        <InvalidQueryAlert invalid={invalid} />
      </>
    );
  };
  let query: ReturnType<typeof violationsQuery.parse>;
  try {
    query = parseSearchParams(violationsQuery, search);
  } catch (error) {
    return invalidView(error);
  }
  let list: Awaited<ReturnType<typeof listViolations>>;
  try {
    list = await listViolations(scope, query);
  } catch (error) {
    // A bad cursor is the link's fault (invalidView throws anything else on, to the error page).
    return invalidView(error);
  }
  const filters: ViolationListFilters = {
    tenant: scope.platform ? (query.tenant ?? null) : null,
    jobType: query.jobType ?? null,
    constraint: query.constraint ?? null,
    from: search.get("from"),
    to: search.get("to"),
    limit: search.get("limit"),
  };
  return (
    <>
      {header}
      <ViolationsTable list={list} filters={filters} platform={scope.platform} />
    </>
  );
}
