import Link from "next/link";
import { type Column, DataTable } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { ViolationListResponse, ViolationTotalsResponse } from "@/lib/features/violations/contract";
import { type ViolationListFilters, violationsHref } from "@/lib/features/violations/violations-types";
import { formatUtc } from "@/lib/format";
import { ViolationFilters } from "./violation-filters";
import { ViolationTotals } from "./violation-totals";

type Violation = ViolationListResponse["violations"][number];

const none = <span className="muted">—</span>;

/** The key names a violation; its message id and error are detail, folded under it when width is short. */
const VIOLATION_COLUMNS: Column<Violation>[] = [
  { id: "when", label: "When", kind: "time", cell: (v) => formatUtc(v.occurredAt) },
  {
    id: "key",
    label: "Key",
    kind: "key",
    priority: 1,
    cell: (v) => (
      <Link href={keyHref(v.tenant, v.key)} data-testid="violation-key">
        <code>{v.key}</code>
      </Link>
    ),
  },
  { id: "tenant", label: "Tenant", kind: "id", cell: (v) => v.tenant },
  { id: "job-type", label: "Job type", kind: "id", cell: (v) => v.jobType },
  { id: "constraint", label: "Constraint", kind: "id", cell: (v) => <code>{v.constraint}</code> },
  {
    id: "message-id",
    label: "Message id",
    kind: "id",
    priority: 3,
    cell: (v) => (v.messageId ? <code>{v.messageId}</code> : none),
    cellProps: () => ({ "data-testid": "violation-message-id" }),
  },
  {
    id: "error",
    label: "Error",
    kind: "truncate",
    priority: 3,
    cell: (v) => v.message ?? none,
    whole: (v) => v.message,
    cellProps: () => ({ className: "muted" }),
  },
];

/** Every uncaught violation, one row per occurrence, each linking to its own key's page. */
export function ViolationsTable({
  list,
  totals,
  filters,
  platform,
}: {
  list: ViolationListResponse;
  /** The list's totals, read with the same filter (GET /api/v1/violations/groups). */
  totals: ViolationTotalsResponse;
  filters: ViolationListFilters;
  platform: boolean;
}) {
  return (
    <>
      <ViolationFilters filters={filters} platform={platform} />
      <ViolationTotals totals={totals} filters={filters} />
      {list.violations.length === 0 ? (
        <EmptyState title="No uncaught violations">
          <p className="muted">No handler hit a unique constraint with its own writes for these filters.</p>
        </EmptyState>
      ) : (
        <section className="panel panel-flush" aria-labelledby="violations-heading">
          <div className="panel-header">
            <h2 id="violations-heading">Affected keys</h2>
            <span className="panel-meta">newest first; each row is one violation, recorded by the worker when it happened</span>
          </div>
          <DataTable
            columns={VIOLATION_COLUMNS}
            rows={list.violations}
            rowKey={(v) => v.id}
            rowProps={() => ({ "data-testid": "violation-row" })}
            labelledBy="violations-heading"
          />
        </section>
      )}
      {list.nextCursor ? (
        <p>
          <Link href={violationsHref({ ...filters, cursor: list.nextCursor })} data-testid="violations-next" className="button">
            Older violations
          </Link>
        </p>
      ) : null}
    </>
  );
}
