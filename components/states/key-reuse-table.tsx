import Link from "next/link";
import { type Column, DataTable } from "@/components/ui/data-table";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { KeyReuseRefusal } from "@/lib/features/keys-and-effects/states-contract";
import { formatCount, formatUtc } from "@/lib/format";

/** A refusal is named by its key; the message and worker it came from are detail. */
function refusalColumns(everyTenant: boolean): Column<KeyReuseRefusal>[] {
  return [
    { id: "refused", label: "Refused (UTC)", kind: "time", cell: (r) => formatUtc(r.deliveredAt).replace(" UTC", "") },
    {
      id: "key",
      label: "Key · job type",
      kind: "key",
      priority: 1,
      cell: (r) => (
        <>
          <Link href={keyHref(r.tenant, r.key)} className="key-link" data-testid="state-key">
            {r.key}
          </Link>
          <span className="key-job">{r.jobType}</span>
        </>
      ),
    },
    ...(everyTenant
      ? [
          {
            id: "tenant",
            label: "Tenant",
            kind: "id",
            cell: (r) => r.tenant,
            cellProps: () => ({ "data-testid": "state-tenant" }),
          } satisfies Column<KeyReuseRefusal>,
        ]
      : []),
    {
      id: "message-id",
      label: "Message id",
      kind: "id",
      priority: 3,
      cell: (r) => (r.messageId ? <code>{r.messageId}</code> : <span className="muted">none passed</span>),
    },
    {
      id: "delivery",
      label: "Delivery",
      kind: "number",
      cell: (r) => (r.deliveryAttempt === null ? "–" : formatCount(r.deliveryAttempt)),
    },
    { id: "worker", label: "Worker", kind: "id", priority: 3, cell: (r) => <code>{r.worker}</code> },
  ];
}

/**
 * The deliveries refused for key reuse, as their workers recorded them: the message the adapter
 * dead-lettered, and the key whose first payload was another (its page shows that effect and
 * every delivery of it, these refusals included).
 */
export function KeyReuseTable({
  refusals,
  everyTenant,
  labelledBy,
}: {
  refusals: KeyReuseRefusal[];
  everyTenant: boolean;
  labelledBy: string;
}) {
  return (
    <DataTable
      columns={refusalColumns(everyTenant)}
      rows={refusals}
      rowKey={(r) => r.id}
      rowProps={() => ({ "data-testid": "state-row" })}
      labelledBy={labelledBy}
      className="states-table"
    />
  );
}
