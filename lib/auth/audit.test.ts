import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleRolePool, createTestDatabase, type TestDatabase } from "../../test/database";
import { createPrismaClient, type PrismaClient } from "../db/prisma";
import { audit } from "./audit";
import { verifyAuditChain } from "./audit-chain";

const COLUMNS = "token_id, actor, tenant_id, action, target, result, detail, ip";

describe("audit(): through the console's pool and through Prisma, the same row", () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let prisma: PrismaClient;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = consoleRolePool(db, "audit-test");
    prisma = createPrismaClient(pool, "onceboard");
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await pool?.end();
    await db?.drop();
  });

  const entries = [
    {
      principal: {
        tokenId: "6f1c2d3e-4a5b-4c6d-8e9f-a0b1c2d3e4f5",
        actor: "token:ci",
        tenantId: "acme",
        role: "viewer" as const,
      },
      action: "effect.read",
      tenantId: "acme",
      target: 'charge:ord-1 "quoted"\n\té 😀',
      result: "not_found",
      ip: "10.0.0.7",
    },
    {
      principal: null,
      action: "effect.search",
      tenantId: null,
      result: "ok",
      detail: { results: 3, status: null, nested: { list: [1, 2.5, null, "x\u0001"] } },
    },
  ];

  it("writes every column alike, null detail and no principal included, and the chain still verifies", async () => {
    for (const entry of entries) {
      await audit(entry, pool);
      await audit(entry, prisma);
    }
    const { rows } = await db.pool.query(`SELECT ${COLUMNS} FROM onceboard.audit_log ORDER BY seq`);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toEqual(rows[1]);
    expect(rows[2]).toEqual(rows[3]);
    expect(rows[0]).toMatchObject({ actor: "token:ci", tenant_id: "acme", result: "not_found", detail: null, ip: "10.0.0.7" });
    expect(rows[2]).toMatchObject({ actor: "anonymous", token_id: null, target: null, detail: entries[1]!.detail });
    const client = await db.pool.connect();
    try {
      expect((await verifyAuditChain(client)).ok).toBe(true);
    } finally {
      client.release();
    }
  });
});
