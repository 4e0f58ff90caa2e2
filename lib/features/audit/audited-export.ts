import { audit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import type { Scope } from "../../auth/scope";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { type AuditExportFormat, auditExportStream, newestAuditId } from "./audit-export";
import type { AuditFilter } from "./audit-filter";

/**
 * GET /api/v1/audit/export: the export is itself audited — who took which slice of the log, in
 * which format — before the first byte leaves. The export stops at the newest row that existed
 * then, so its own audit row (and anything appended while it streams) is not in it.
 */
export async function exportAuditLog(
  input: { principal: Principal; scope: Scope; filter: AuditFilter; format: AuditExportFormat; ip: string | null },
  db: PrismaClient = getPrisma(),
): Promise<{ stream: ReadableStream<Uint8Array>; filename: string }> {
  const upTo = await newestAuditId(db);
  const tenant = input.scope.narrow(input.filter.tenant).tenant;
  await audit(
    {
      principal: input.principal,
      action: "audit.export",
      tenantId: tenant,
      target: null,
      result: "ok",
      detail: {
        format: input.format,
        upTo: upTo.toString(),
        actor: input.filter.actor ?? null,
        action: input.filter.action ?? null,
        target: input.filter.target ?? null,
        from: input.filter.from?.toISOString() ?? null,
        to: input.filter.to?.toISOString() ?? null,
      },
      ip: input.ip,
    },
    db,
  );
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");
  return {
    stream: auditExportStream(input.scope, { filter: input.filter, format: input.format, upTo }, db),
    filename: `onceboard-audit-${tenant ?? "all"}-${stamp}.${input.format === "csv" ? "csv" : "ndjson"}`.replace(/[^\w.-]/g, "_"),
  };
}
