import { type AuditPageFilters, auditSearch } from "@/lib/features/audit/audit-page-types";

/** Downloads of the filtered log (GET /api/v1/audit/export, streamed and itself audited). */
export function AuditExportLinks({ filters }: { filters: AuditPageFilters }) {
  return (
    <p data-testid="audit-export">
      Export these rows:{" "}
      <a className="button button-quiet" href={`/api/v1/audit/export?${auditSearch(filters, { format: "csv" })}`} download>
        CSV
      </a>{" "}
      <a className="button button-quiet" href={`/api/v1/audit/export?${auditSearch(filters, { format: "ndjson" })}`} download>
        NDJSON
      </a>
    </p>
  );
}
