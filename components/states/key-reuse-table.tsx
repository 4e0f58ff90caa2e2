import Link from "next/link";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { KeyReuseRefusal } from "@/lib/features/keys-and-effects/states-contract";
import { formatCount, formatUtc } from "@/lib/format";

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
    <div className="table-scroll">
      <table className="data-table states-table" aria-labelledby={labelledBy}>
        <thead>
          <tr>
            <th scope="col">Refused (UTC)</th>
            <th scope="col">Key · job type</th>
            {everyTenant ? <th scope="col">Tenant</th> : null}
            <th scope="col">Message id</th>
            <th scope="col" className="num">
              Delivery
            </th>
            <th scope="col">Worker</th>
          </tr>
        </thead>
        <tbody>
          {refusals.map((r) => (
            <tr key={r.id} data-testid="state-row">
              <td>{formatUtc(r.deliveredAt).replace(" UTC", "")}</td>
              <th scope="row">
                <Link href={keyHref(r.tenant, r.key)} className="key-link" data-testid="state-key">
                  {r.key}
                </Link>
                <span className="key-job">{r.jobType}</span>
              </th>
              {everyTenant ? <td data-testid="state-tenant">{r.tenant}</td> : null}
              <td>{r.messageId ? <code>{r.messageId}</code> : <span className="muted">none passed</span>}</td>
              <td className="num">{r.deliveryAttempt === null ? "–" : formatCount(r.deliveryAttempt)}</td>
              <td>
                <code>{r.worker}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
