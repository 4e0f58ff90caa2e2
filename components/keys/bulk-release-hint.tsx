"use client";

import { useConsoleWritable } from "@/components/shell/console-mode";

/**
 * Where a bulk release would be, for a platform operator or admin who has not named a tenant: the
 * release acts on one tenant's stuck claims (POST /api/v1/bulk/release needs one), so the hint says
 * to name it rather than leaving the action undiscoverable. A read-only console shows no write, so
 * no hint either.
 */
export function BulkReleaseHint({ where }: { where: string }) {
  const writable = useConsoleWritable();
  if (!writable) return null;
  return (
    <p className="panel bulk-hint muted" data-testid="bulk-release-hint">
      <strong>Bulk release</strong> works on one tenant at a time: name a tenant {where} to release every stuck claim of that
      tenant matching the filter.
    </p>
  );
}
