"use client";

import Link from "next/link";
import { useSearchParams } from "next/navigation";
import type { TenantRow } from "@/lib/features/overview/contract";
import { formatCount } from "@/lib/format";
import { withParams } from "./overview-filters";

export function TopTenants({ tenants }: { tenants: TenantRow[] }) {
  const searchParams = useSearchParams();
  return (
    <section className="panel panel-flush" aria-labelledby="tenants-heading" data-testid="top-tenants">
      <div className="panel-header">
        <h2 id="tenants-heading">Which tenant</h2>
        <span className="panel-meta">violations, then stuck claims, then suppressions</span>
      </div>
      {tenants.length === 0 ? (
        <p className="panel-empty muted">No tenant had a suppression, a violation or a stuck claim in this range.</p>
      ) : (
        <div className="table-scroll">
          <table className="data-table">
            <thead>
              <tr>
                <th scope="col">Tenant</th>
                <th scope="col" className="num">
                  Uncaught
                </th>
                <th scope="col" className="num">
                  Stuck
                </th>
                <th scope="col" className="num">
                  Suppressed
                </th>
              </tr>
            </thead>
            <tbody>
              {tenants.map((t) => (
                <tr key={t.tenant} data-testid="tenant-row">
                  <th scope="row">
                    <Link href={`/overview${withParams(searchParams, { tenant: t.tenant })}`} scroll={false} replace>
                      {t.tenant}
                    </Link>
                  </th>
                  <td className="num" data-tone={t.violations > 0 ? "danger" : undefined}>
                    {formatCount(t.violations)}
                  </td>
                  <td className="num" data-tone={t.stuck > 0 ? "warning" : undefined}>
                    {formatCount(t.stuck)}
                  </td>
                  <td className="num">{formatCount(t.suppressions)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
