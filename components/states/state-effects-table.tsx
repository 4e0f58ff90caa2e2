import Link from "next/link";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { StateEffect } from "@/lib/features/keys-and-effects/states-contract";
import type { EffectState } from "@/lib/features/keys-and-effects/states-types";
import { formatCount, formatUtc } from "@/lib/format";

const utc = (at: string | null) => formatUtc(at, { empty: "–" }).replace(" UTC", "");

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
  const claim = state === "in_progress" || state === "stuck";
  const failure = state === "failed" || state === "abandoned";
  return (
    <div className="table-scroll">
      <table className="data-table states-table" aria-labelledby={labelledBy}>
        <thead>
          <tr>
            <th scope="col">Key · job type</th>
            {everyTenant ? <th scope="col">Tenant</th> : null}
            <th scope="col" className="num">
              Attempts
            </th>
            {claim ? (
              <>
                <th scope="col">Owner</th>
                <th scope="col">{state === "stuck" ? "Lease ended (UTC)" : "Lease until (UTC)"}</th>
              </>
            ) : null}
            {failure ? (
              <>
                <th scope="col">Error</th>
                <th scope="col">{state === "failed" ? "Failed (UTC)" : "Abandoned (UTC)"}</th>
              </>
            ) : null}
            {state === "completed" ? <th scope="col">Completed (UTC)</th> : null}
            <th scope="col">Created (UTC)</th>
          </tr>
        </thead>
        <tbody>
          {effects.map((e) => (
            <tr key={`${e.tenant}|${e.key}`} data-testid="state-row">
              <th scope="row">
                <Link href={keyHref(e.tenant, e.key)} className="key-link" data-testid="state-key">
                  {e.key}
                </Link>
                <span className="key-job">{e.jobType}</span>
              </th>
              {everyTenant ? <td data-testid="state-tenant">{e.tenant}</td> : null}
              <td className="num" data-testid="state-attempts">
                {formatCount(e.attempts)}
              </td>
              {claim ? (
                <>
                  <td>{e.owner ? <code>{e.owner}</code> : <span className="muted">–</span>}</td>
                  <td>{utc(e.leaseUntil)}</td>
                </>
              ) : null}
              {failure ? (
                <>
                  <td className="effect-error" data-testid="effect-error">
                    {e.error ?? <span className="muted">no error recorded</span>}
                  </td>
                  <td>{utc(e.updatedAt)}</td>
                </>
              ) : null}
              {state === "completed" ? <td>{utc(e.completedAt)}</td> : null}
              <td>{utc(e.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
