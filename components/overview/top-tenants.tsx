"use client";

import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { type Column, DataTable } from "@/components/ui/data-table";
import type { TenantRow } from "@/lib/features/overview/contract";
import { formatCount } from "@/lib/format";
import { withParams } from "./overview-filters";

export function TopTenants({ tenants }: { tenants: TenantRow[] }) {
  const searchParams = useSearchParams();
  const columns: Column<TenantRow>[] = [
    {
      id: "tenant",
      label: "Tenant",
      kind: "id",
      priority: 1,
      cell: (t) => (
        <Link href={`/overview${withParams(searchParams, { tenant: t.tenant })}`} scroll={false} replace>
          {t.tenant}
        </Link>
      ),
    },
    {
      id: "uncaught",
      label: "Uncaught",
      kind: "number",
      cell: (t) => formatCount(t.violations),
      cellProps: (t) => ({ "data-tone": t.violations > 0 ? "danger" : undefined }),
    },
    {
      id: "stuck",
      label: "Stuck",
      kind: "number",
      cell: (t) => formatCount(t.stuck),
      cellProps: (t) => ({ "data-tone": t.stuck > 0 ? "warning" : undefined }),
    },
    { id: "suppressed", label: "Suppressed", kind: "number", cell: (t) => formatCount(t.suppressions) },
  ];
  return (
    <section className="panel panel-flush" aria-labelledby="tenants-heading" data-testid="top-tenants">
      <div className="panel-header">
        <h2 id="tenants-heading">Which tenant</h2>
        <span className="panel-meta">violations, then stuck claims, then suppressions</span>
      </div>
      {tenants.length === 0 ? (
        <p className="panel-empty muted">No tenant had a suppression, a violation or a stuck claim in this range.</p>
      ) : (
        <DataTable
          columns={columns}
          rows={tenants}
          rowKey={(t) => t.tenant}
          rowProps={() => ({ "data-testid": "tenant-row" })}
          labelledBy="tenants-heading"
        />
      )}
    </section>
  );
}
