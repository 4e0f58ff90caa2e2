import type { AuditIntegrityView } from "@/lib/features/audit/contract";
import { formatCount, formatUtc } from "@/lib/format";

/** Whether the log's hash chain holds (lib/features/audit/audit-integrity.ts), beside the export. */
export function AuditIntegrityBadge({ integrity }: { integrity: AuditIntegrityView }) {
  const rows = integrity.rowsChecked === null ? "" : ` (${formatCount(integrity.rowsChecked)} rows)`;
  if (integrity.state === "ok") {
    return (
      <p className="muted" data-testid="audit-integrity" data-state="ok">
        Integrity: the hash chain holds{rows}, checked {formatUtc(integrity.checkedAt)}.
      </p>
    );
  }
  if (integrity.state === "checking") {
    return (
      <p className="muted" data-testid="audit-integrity" data-state="checking">
        Integrity: checking the hash chain{rows}…
      </p>
    );
  }
  return (
    <p role="alert" className="login-error" data-testid="audit-integrity" data-state="broken">
      Integrity: the hash chain is broken — {integrity.problem}. Run npm run audit -- verify on the server.
    </p>
  );
}
