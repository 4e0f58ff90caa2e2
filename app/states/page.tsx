import type { Metadata } from "next";
import { StateFilters } from "@/components/states/state-filters";
import { StatesView } from "@/components/states/states-view";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { readStatesPage } from "@/lib/features/keys-and-effects/audited-state-reads";
import { statesPageQuery } from "@/lib/routes/page-queries";
import { declarePage } from "../_shared/declare-page";

export const metadata: Metadata = { title: "States" };
export const dynamic = "force-dynamic";

/**
 * Browse by state (Sidekiq's Retries and Dead, Oban Web's state sidebar): every state's count for
 * the filter beside the list of one, read as GET /api/v1/effect-states and its lists read them, at
 * one instant, so the count heading the list is the number of rows its pages hold.
 */
export default declarePage({
  title: "Effects by state",
  description: "Every effect state with its count for the filter; open one to list its effects.",
  query: statesPageQuery,
  invalid: ({ scope, invalid }) => (
    <>
      <StateFilters filters={invalid.typed} platform={scope.platform} />
      <InvalidQueryAlert invalid={invalid} />
    </>
  ),
  load: ({ principal, scope, ip, query: { state, list } }) => readStatesPage({ principal, scope, ip, state, list }),
  render: ({ principal, scope, values, query: { state }, data }) => (
    <StatesView
      state={state}
      counts={data.counts}
      rows={data.rows}
      filters={{
        tenant: scope.platform ? values.get("tenant") : null,
        jobType: values.get("jobType"),
        from: values.get("from"),
        to: values.get("to"),
        cursor: values.get("cursor"),
      }}
      platform={scope.platform}
      role={principal.role}
    />
  ),
});
