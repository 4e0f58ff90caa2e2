import type { Scope } from "../../auth/scope";
import type { Prisma } from "../../db/generated/client";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { type AuditFilter, auditWhere } from "./audit-filter";
import type { AuditRow } from "./contract";
import { actorFilterFor, auditRowsFor } from "./list-audit";

/**
 * The filtered audit log as a file, streamed: a ReadableStream that reads the next keyset batch
 * (id < the last one sent, newest first) only when the consumer asks for more bytes (pull), so the
 * console holds one batch at a time however long the log, and a client that stops reading stops
 * the queries. `upTo` pins the export to the rows that existed when it began.
 */
export type AuditExportFormat = "csv" | "ndjson";

const AUDIT_EXPORT_BATCH = 1000;

const AUDIT_CSV_COLUMNS = ["id", "at", "actor", "token_id", "tenant_id", "action", "target", "result", "ip", "detail"] as const;

// A cell that begins with one of these is a formula to Excel, LibreOffice and Google Sheets (CSV
// injection): "=HYPERLINK(…)" in a key or an actor's name would run in the reader's spreadsheet.
const FORMULA_LEAD = /^[=+\-@\u2212]/;
// Tab and CR lead a formula by themselves (OWASP).
const FORMULA_CONTROL_LEAD = /^[\t\r]/;
// What a spreadsheet skips before it reads a formula, and what hides one from a plain look at the
// cell: whitespace of every kind (space, NBSP, U+3000 …), control and format characters (zero
// widths, bidi overrides such as U+202E, the BOM).
const IGNORED_LEAD = /^[\s\p{Cc}\p{Cf}]+/u;

/** Whether a cell would be read as a formula: its first character that counts, fullwidth forms folded (＝ is =). */
export function isFormulaLike(value: string): boolean {
  if (FORMULA_CONTROL_LEAD.test(value)) return true;
  const significant = value.replace(IGNORED_LEAD, "");
  // NFKC folds ＝＋－＠ and ﹦ to = + - @; only the first few characters matter.
  return FORMULA_LEAD.test(significant.slice(0, 4).normalize("NFKC"));
}

/**
 * One CSV cell (RFC 4180): a formula-like value (isFormulaLike) gets a leading apostrophe (shown
 * as text, per OWASP's advice), then a value holding a comma, quote, CR or LF is quoted with
 * quotes doubled.
 */
export function csvCell(value: string | null): string {
  if (value === null || value === "") return "";
  const safe = isFormulaLike(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function csvLine(row: AuditRow): string {
  const cells: (string | null)[] = [
    row.id,
    row.at,
    row.actor,
    row.tokenId,
    row.tenantId,
    row.action,
    row.target,
    row.result,
    row.ip,
    row.detail === null || row.detail === undefined ? null : JSON.stringify(row.detail),
  ];
  return `${cells.map(csvCell).join(",")}\r\n`;
}

function ndjsonLine(row: AuditRow): string {
  return `${JSON.stringify(row)}\n`;
}

/** The id of the newest audit row now (0 when the log is empty): where an export stops. */
export async function newestAuditId(db: Pick<PrismaClient, "auditLog"> = getPrisma()): Promise<bigint> {
  const newest = await db.auditLog.findFirst({ orderBy: { id: "desc" }, select: { id: true } });
  return newest?.id ?? 0n;
}

export function auditExportStream(
  scope: Scope,
  input: { filter: AuditFilter; format: AuditExportFormat; upTo: bigint; batchSize?: number },
  db: Pick<PrismaClient, "auditLog" | "apiToken"> = getPrisma(),
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const scoped = auditWhere(scope, input.filter);
  const batchSize = input.batchSize ?? AUDIT_EXPORT_BATCH;
  let before = input.upTo + 1n;
  let headerSent = input.format !== "csv";
  let done = false;
  let where: Prisma.AuditLogWhereInput | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!headerSent) {
          headerSent = true;
          controller.enqueue(encoder.encode(`${AUDIT_CSV_COLUMNS.join(",")}\r\n`));
          return;
        }
        if (done) return;
        where ??= { ...scoped, ...(await actorFilterFor(scope, input.filter, db)) };
        const rows = await db.auditLog.findMany({
          where: { ...where, id: { lt: before } },
          orderBy: { id: "desc" },
          take: batchSize,
        });
        const line = input.format === "csv" ? csvLine : ndjsonLine;
        if (rows.length > 0) {
          const shown = await auditRowsFor(scope, rows, db);
          controller.enqueue(encoder.encode(shown.map(line).join("")));
          before = rows[rows.length - 1]?.id ?? before;
        }
        if (rows.length < batchSize) {
          done = true;
          controller.close();
        }
      },
    },
    // One batch's bytes queued at most: the next query waits until the client has taken the last.
    { highWaterMark: 1 },
  );
}
