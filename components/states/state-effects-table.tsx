import Link from "next/link";
import { type Column, DataTable } from "@/components/ui/data-table";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { StateEffect } from "@/lib/features/keys-and-effects/states-contract";
import type { EffectState } from "@/lib/features/keys-and-effects/states-types";
import { formatCount, formatUtc } from "@/lib/format";

const utc = (at: string | null) => formatUtc(at, { empty: "–" }).replace(" UTC", "");

/** The columns a state is about, after the key that names each row and before when it was created. */
function stateColumns(state: EffectState, everyTenant: boolean): Column<StateEffect>[] {
  const columns: Column<StateEffect>[] = [
    {
      id: "key",
      label: "Key · job type",
      kind: "key",
      priority: 1,
      cell: (e) => (
        <>
          <Link href={keyHref(e.tenant, e.key)} className="key-link" data-testid="state-key">
            {e.key}
          </Link>
          <span className="key-job">{e.jobType}</span>
        </>
      ),
    },
  ];
  if (everyTenant)
    columns.push({
      id: "tenant",
      label: "Tenant",
      kind: "id",
      cell: (e) => e.tenant,
      cellProps: () => ({ "data-testid": "state-tenant" }),
    });
  columns.push({
    id: "attempts",
    label: "Attempts",
    kind: "number",
    cell: (e) => formatCount(e.attempts),
    cellProps: () => ({ "data-testid": "state-attempts" }),
  });
  if (state === "in_progress" || state === "stuck")
    columns.push(
      {
        id: "owner",
        label: "Owner",
        kind: "id",
        cell: (e) => (e.owner ? <code>{e.owner}</code> : <span className="muted">–</span>),
      },
      {
        id: "lease",
        label: state === "stuck" ? "Lease ended (UTC)" : "Lease until (UTC)",
        kind: "time",
        cell: (e) => utc(e.leaseUntil),
      },
    );
  if (state === "failed" || state === "abandoned")
    columns.push(
      {
        id: "error",
        label: "Error",
        kind: "text",
        cell: (e) => e.error ?? <span className="muted">no error recorded</span>,
        cellProps: () => ({ className: "effect-error", "data-testid": "effect-error" }),
      },
      {
        id: "ended",
        label: state === "failed" ? "Failed (UTC)" : "Abandoned (UTC)",
        kind: "time",
        cell: (e) => utc(e.updatedAt),
      },
    );
  if (state === "completed")
    columns.push({ id: "completed", label: "Completed (UTC)", kind: "time", cell: (e) => utc(e.completedAt) });
  columns.push({ id: "created", label: "Created (UTC)", kind: "time", priority: 3, cell: (e) => utc(e.createdAt) });
  return columns;
}

/**
 * One state's effects. Each key opens on the Keys page (its deliveries, verdict, release); the
 * columns are what the state is about: a live or stuck claim's owner and lease, a failed or
 * abandoned step's error (the library's record, redacted) and when it failed, a completed one's time.
 */
export function StateEffectsTable({
  state,
  effects,
  everyTenant,
  labelledBy,
}: {
  state: EffectState;
  effects: StateEffect[];
  everyTenant: boolean;
  labelledBy: string;
}) {
  return (
    <DataTable
      columns={stateColumns(state, everyTenant)}
      rows={effects}
      rowKey={(e) => `${e.tenant}|${e.key}`}
      rowProps={() => ({ "data-testid": "state-row" })}
      labelledBy={labelledBy}
      className="states-table"
    />
  );
}
