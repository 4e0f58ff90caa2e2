import Link from "next/link";
import { BulkReleaseHint } from "@/components/keys/bulk-release-hint";
import { EmptyState } from "@/components/ui/empty-state";
import type { Role } from "@/lib/auth/auth-types";
import type { StatesPageData } from "@/lib/features/keys-and-effects/audited-state-reads";
import { keysQueryString } from "@/lib/features/keys-and-effects/keys-types";
import {
  BROWSE_LABELS,
  BROWSE_MEANINGS,
  type BrowseList,
  KEY_REUSE,
  type StatesFilters,
  statesHref,
} from "@/lib/features/keys-and-effects/states-types";
import { formatCount, formatUtc } from "@/lib/format";
import { KeyReuseTable } from "./key-reuse-table";
import { StateCounts } from "./state-counts";
import { StateEffectsTable } from "./state-effects-table";
import { StateFilters } from "./state-filters";

/**
 * The States page: the filter, every state's count beside the list of the one selected, paged
 * newest first. The count heading the list is the sidebar's, read with the list at one instant
 * with one filter: it is the number of rows its pages hold.
 */
export function StatesView({
  state,
  counts,
  rows,
  filters,
  platform,
  role,
}: {
  state: BrowseList;
  counts: StatesPageData["counts"];
  rows: StatesPageData["rows"];
  /** What the URL named, the page's cursor included (a tenant session's tenant is implied, never in its links). */
  filters: Omit<StatesFilters, "state">;
  platform: boolean;
  role: Role;
}) {
  const count = state === KEY_REUSE ? counts.keyReuse : (counts.states.find((s) => s.state === state)?.count ?? 0);
  const shown = rows.kind === "effects" ? rows.effects.effects.length : rows.refusals.refusals.length;
  const everyTenant = counts.tenant === null;
  const next = (rows.kind === "effects" ? rows.effects : rows.refusals).nextCursor;
  const scope = everyTenant ? "every tenant" : `tenant ${counts.tenant}`;
  const window = `${state === KEY_REUSE ? "delivered" : "created"} ${formatUtc(counts.from, { seconds: false })} – ${formatUtc(counts.to, { seconds: false })}`;
  const headingId = "state-list-heading";
  return (
    <>
      <StateFilters filters={{ ...filters, state, cursor: null }} platform={platform} />
      <div className="states-layout">
        <StateCounts counts={counts} selected={state} filters={{ ...filters, cursor: null }} />
        <section className="panel panel-flush states-list" aria-labelledby={headingId} data-testid="state-list">
          <div className="panel-header">
            <h2 id={headingId}>
              {BROWSE_LABELS[state]}{" "}
              <span className="badge" data-testid="state-list-count">
                {formatCount(count)}
              </span>
            </h2>
            <span className="panel-meta">
              {BROWSE_MEANINGS[state]} {everyTenant ? "Every tenant" : `Tenant ${counts.tenant}`}
              {counts.jobType ? `, job type ${counts.jobType}` : ""}, {window}; newest first
            </span>
          </div>
          {state === "stuck" && role !== "viewer" && count > 0 ? (
            everyTenant ? (
              <div className="panel-body">
                <BulkReleaseHint where="in the filter above" />
              </div>
            ) : (
              <p className="panel-body">
                <Link
                  href={`/keys?${keysQueryString({ tenant: platform ? (counts.tenant ?? undefined) : undefined, jobType: counts.jobType ?? undefined })}`}
                  data-testid="bulk-release-link"
                >
                  Release stuck claims in bulk on the Keys page
                </Link>{" "}
                <span className="muted">
                  (every stuck claim of the tenant{counts.jobType ? " and job type" : ""}, whenever created)
                </span>
              </p>
            )
          ) : null}
          {state === KEY_REUSE ? (
            <p className="panel-body muted" data-testid="key-reuse-record">
              As the workers recorded them on the delivery timeline: a worker started with the timeline off records none, a worker
              killed between flushes loses its last few seconds, and a PostgreSQL crash empties the timeline (it is unlogged). The
              broker&apos;s dead-letter queue holds the messages themselves.
            </p>
          ) : null}
          {shown === 0 ? (
            <EmptyState title={`No ${BROWSE_LABELS[state].toLowerCase()} ${state === KEY_REUSE ? "deliveries" : "effects"}`}>
              <p className="muted">
                {filters.cursor
                  ? "No more on this page: the rows that were here have changed state since."
                  : `None for ${scope}${counts.jobType ? `, job type ${counts.jobType}` : ""}, ${window}.`}
              </p>
            </EmptyState>
          ) : rows.kind === "effects" ? (
            <StateEffectsTable
              state={rows.effects.state}
              effects={rows.effects.effects}
              everyTenant={everyTenant}
              labelledBy={headingId}
            />
          ) : (
            <KeyReuseTable refusals={rows.refusals.refusals} everyTenant={everyTenant} labelledBy={headingId} />
          )}
          <Pager state={state} filters={filters} next={next} />
        </section>
      </div>
    </>
  );
}

/** Newest (back to the first page) and the next page, the filter kept. */
function Pager({ state, filters, next }: { state: BrowseList; filters: StatesFilters; next: string | null }) {
  if (!next && !filters.cursor) return null;
  return (
    <nav className="panel-body pager" aria-label="Pages of the list">
      {filters.cursor ? (
        <Link href={statesHref({ ...filters, state, cursor: null })} className="button" data-testid="states-newest">
          Newest
        </Link>
      ) : null}
      {next ? (
        <Link href={statesHref({ ...filters, state, cursor: next })} className="button" data-testid="states-next">
          Next page
        </Link>
      ) : null}
    </nav>
  );
}
