import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as exportRoute from "../../../app/api/v1/audit/export/route";
import * as auditRoute from "../../../app/api/v1/audit/route";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { createToken } from "../../auth/tokens";
import { getPrisma } from "../../db/prisma";
import { auditExportStream, csvCell, isFormulaLike, newestAuditId } from "./audit-export";
import { auditIntegrity } from "./audit-integrity";

/** The audit log's export (and its filters, shared with GET /api/v1/audit), on a real PostgreSQL. */
const CONSOLE = "http://console.test";
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  process.env.DATABASE_URL = db.url;
  process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
  process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
});
afterAll(async () => {
  await getPrisma().$disconnect();
  await db.drop();
});

async function admin(tenantId: string | null): Promise<Record<string, string>> {
  const { secret } = await createToken({ name: `auditor-${randomBytes(3).toString("hex")}`, tenantId, role: "admin" });
  return { authorization: `Bearer ${secret}`, host: "console.test" };
}

async function insertAudit(
  rows: { actor: string; tenant: string | null; action: string; target: string | null; tokenId?: string }[],
) {
  for (const row of rows) {
    await db.pool.query(
      "INSERT INTO audit_log (actor, tenant_id, action, target, result, token_id) VALUES ($1, $2, $3, $4, 'ok', $5)",
      [row.actor, row.tenant, row.action, row.target, row.tokenId ?? null],
    );
  }
}

describe("CSV cells", () => {
  it("quotes commas, quotes and line breaks, and neutralises formula-leading = + - @ tab and CR", () => {
    expect(csvCell("plain")).toBe("plain");
    expect(csvCell(null)).toBe("");
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("two\nlines")).toBe('"two\nlines"');
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvCell("+1")).toBe("'+1");
    expect(csvCell("-2")).toBe("'-2");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell("\tcmd")).toBe("'\tcmd");
    expect(csvCell("\rcmd")).toBe('"\'\rcmd"');
    expect(csvCell("1+1")).toBe("1+1");
  });
});

describe("CSV cells hiding a formula (issue 35)", () => {
  it("neutralises a formula behind whitespace, NBSP, U+3000, bidi and zero-width characters, or in fullwidth", () => {
    for (const hidden of [
      " =1+1",
      "\u00a0=1+1",
      "\u3000=1+1",
      "\u202e=1+1",
      "\u200b\u2066=1+1",
      "\ufeff@SUM(A1)",
      "\uff1d1+1",
      "\uff0b1",
      "\uff0d1",
      "\uff20SUM(A1)",
      "\ufe66HYPERLINK(1)",
      " \u3000\uff1dHYPERLINK(1)",
      "\u22121",
    ])
      expect(csvCell(hidden), JSON.stringify(hidden)).toBe(
        /[",\r\n]/.test(hidden) ? `"'${hidden.replace(/"/g, '""')}"` : `'${hidden}`,
      );
    for (const kept of ["a = b", "x\u3000=1", "1+1", "\u3000text", "ｔｅｘｔ"]) expect(csvCell(kept)).toBe(kept);
  });

  /** The cell as a spreadsheet reads it back: unquoted, quotes undoubled. */
  const readBack = (cell: string) => (cell.startsWith('"') ? cell.slice(1, -1).replace(/""/g, '"') : cell);
  const ignorable = fc.constantFrom(
    " ",
    "\t",
    "\u00a0",
    "\u2007",
    "\u3000",
    "\u202e",
    "\u202a",
    "\u200b",
    "\u2066",
    "\ufeff",
    "\u0000",
  );
  const lead = fc.constantFrom("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20", "\ufe66", "\ufe62", "\ufe63");

  it("property: whatever hides it, a cell whose first character that counts leads a formula reads back as text", () => {
    fc.assert(
      fc.property(fc.array(ignorable, { maxLength: 5 }), lead, fc.string({ maxLength: 20 }), (prefix, first, rest) => {
        const value = `${prefix.join("")}${first}${rest}`;
        expect(readBack(csvCell(value))).toBe(`'${value}`);
      }),
      { numRuns: 500 },
    );
  });

  it("property: any other cell reads back exactly as it was", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 30 }), (value) => {
        const back = readBack(csvCell(value));
        expect(back === value || back === `'${value}`).toBe(true);
        if (back !== value) expect(isFormulaLike(value)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe("GET /api/v1/audit/export", () => {
  it("exports the filtered rows only (actor, action family, target, tenant), newest first, and audits the export", async () => {
    // acme's own token: a tenant's export shows its own actors (another's would be withheld).
    const { token: oncall } = await createToken({ name: "oncall", tenantId: "acme", role: "operator" });
    await insertAudit([
      { actor: "Oncall (…aaaaaa)", tenant: "acme", action: "effect.release", target: "=1+2", tokenId: oncall.id },
      { actor: "oncall (…aaaaaa)", tenant: "acme", action: "effect.read", target: 'capture:"quoted",x', tokenId: oncall.id },
      { actor: "someone-else", tenant: "acme", action: "effect.release", target: "capture:other" },
      { actor: "oncall (…aaaaaa)", tenant: "globex", action: "effect.release", target: "globex-key" },
    ]);
    const headers = await admin("acme");
    const response = await exportRoute.GET(
      new Request(`${CONSOLE}/api/v1/audit/export?format=csv&actor=ONCALL&action=effect.&tenant=globex`, { headers }),
      { params: Promise.resolve({}) },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/csv");
    expect(response.headers.get("content-disposition")).toMatch(/attachment; filename="onceboard-audit-acme-.*\.csv"/);
    const lines = (await response.text()).split("\r\n").filter((line) => line !== "");
    expect(lines[0]).toBe("id,at,actor,token_id,tenant_id,action,target,result,ip,detail");
    expect(lines.slice(1).map((line) => line.split(",")[5])).toEqual(["effect.read", "effect.release"]);
    expect(lines[1]).toContain('"capture:""quoted"",x"');
    expect(lines[2]).toContain(",'=1+2,");
    expect(lines.join("\n")).not.toContain("globex");

    const exports = await db.pool.query("SELECT tenant_id, detail FROM audit_log WHERE action = 'audit.export'");
    expect(exports.rows).toHaveLength(1);
    expect(exports.rows[0]).toMatchObject({ tenant_id: "acme", detail: { format: "csv", actor: "ONCALL", action: "effect." } });

    const ndjson = await exportRoute.GET(
      new Request(`${CONSOLE}/api/v1/audit/export?format=ndjson&target=globex-key`, { headers: await admin(null) }),
      { params: Promise.resolve({}) },
    );
    const objects = (await ndjson.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(objects).toEqual([expect.objectContaining({ tenantId: "globex", target: "globex-key", action: "effect.release" })]);

    const page = await auditRoute.GET(new Request(`${CONSOLE}/api/v1/audit?target=globex-key`, { headers: await admin(null) }), {
      params: Promise.resolve({}),
    });
    expect(((await page.json()) as { entries: unknown[] }).entries).toHaveLength(1);
  });

  it("answers 400 naming the field for a bad filter", async () => {
    const response = await exportRoute.GET(
      new Request(`${CONSOLE}/api/v1/audit/export?format=xlsx&from=yesterday`, { headers: await admin(null) }),
      {
        params: Promise.resolve({}),
      },
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/format.*from|from.*format/s);
  });

  it("streams: the first rows arrive after one batch query, each later batch only when the reader asks", async () => {
    await db.pool.query(
      "INSERT INTO audit_log (actor, tenant_id, action, target, result) SELECT 'bulk-writer', 'initech', 'effect.read', 'k' || g, 'ok' FROM generate_series(1, 5000) g",
    );
    let queries = 0;
    const prisma = getPrisma();
    const counting = {
      auditLog: {
        findMany: ((args: Parameters<typeof prisma.auditLog.findMany>[0]) => {
          queries += 1;
          return prisma.auditLog.findMany(args);
        }) as typeof prisma.auditLog.findMany,
        findFirst: prisma.auditLog.findFirst.bind(prisma.auditLog),
      },
      apiToken: prisma.apiToken,
    } as unknown as Pick<typeof prisma, "auditLog" | "apiToken">;
    const upTo = await newestAuditId(prisma);
    const stream = auditExportStream(
      Scope.operator(),
      { filter: { tenant: "initech" }, format: "ndjson", upTo, batchSize: 500 },
      counting,
    );
    const reader = stream.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value).split("\n").filter(Boolean)).toHaveLength(500);
    // The stream holds at most one batch ahead of its reader: never the whole log.
    expect(queries).toBeLessThanOrEqual(2);
    let lines = 500;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      lines += new TextDecoder().decode(value).split("\n").filter(Boolean).length;
    }
    expect(lines).toBe(5000);
    expect(queries).toBeGreaterThanOrEqual(10);
  });
});

describe("audit integrity for the page", () => {
  it("walks in bounded slices from where it stopped, then reports the chain holds; a platform admin sees the count", async () => {
    globalThis.__onceboardAuditIntegrity = undefined;
    const total = Number((await db.pool.query("SELECT count(*) FROM audit_log")).rows[0].count);
    const slice = Math.ceil(total / 3);
    const first = await auditIntegrity(Scope.operator(), { db: db.pool, rowsPerCheck: slice });
    expect(first.state).toBe("checking");
    let view = first;
    for (let i = 0; i < 5 && view.state === "checking"; i++)
      view = await auditIntegrity(Scope.operator(), { db: db.pool, rowsPerCheck: slice });
    expect(view).toMatchObject({ state: "ok", rowsChecked: total });
    const tenantView = await auditIntegrity(Scope.ofPrincipal({ tenantId: "acme" }), { db: db.pool, rowsPerCheck: slice });
    expect(tenantView).toMatchObject({ state: "ok", rowsChecked: null });
  });
});
