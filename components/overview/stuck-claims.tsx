"use client";

import Link from "next/link";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { StuckClaim } from "@/lib/features/overview/contract";
import { formatCount, formatDuration } from "@/lib/format";

/** `browseHref`: the States page's stuck list for the Overview's tenant and job type (every stuck claim, paged). */
export function StuckClaims({ claims, total, browseHref }: { claims: StuckClaim[]; total: number; browseHref: string }) {
  return (
    <section className="panel panel-flush" aria-labelledby="stuck-heading" data-testid="stuck-claims">
      <div className="panel-header">
        <h2 id="stuck-heading">
          Stuck claims
          {total > 0 ? (
            <span className="badge" data-tone="warning">
              {formatCount(total)}
            </span>
          ) : null}
        </h2>
        <span className="panel-meta">
          in progress past their lease, now (whatever the range) ·{" "}
          <Link href={browseHref} data-testid="stuck-browse">
            browse by state
          </Link>
        </span>
      </div>
      {claims.length === 0 ? (
        <p className="panel-empty muted">No claim is past its lease.</p>
      ) : (
        <div className="table-scroll">
          <table className="data-table">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Tenant</th>
                <th scope="col">Job type</th>
                <th scope="col" className="num">
                  Age
                </th>
                <th scope="col" className="num">
                  Lease over by
                </th>
              </tr>
            </thead>
            <tbody>
              {claims.map((c) => (
                <tr key={`${c.tenant}|${c.key}`} data-testid="stuck-claim">
                  <th scope="row">
                    <Link href={keyHref(c.tenant, c.key)}>
                      <code>{c.key}</code>
                    </Link>
                  </th>
                  <td>{c.tenant}</td>
                  <td>{c.jobType}</td>
                  <td className="num">{formatDuration(c.ageSeconds)}</td>
                  <td className="num">{formatDuration(c.overdueSeconds)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
