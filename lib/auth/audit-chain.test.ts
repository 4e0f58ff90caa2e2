import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { DEFAULT_MIGRATIONS_DIR, migrateConsole } from "../db/migrate";
import { ensureEffectPartitions } from "../db/partitions";
import { consoleRoleProblem, EMBEDDED_CONSOLE_ROLE } from "../db/roles";
import { createScratchDatabase } from "../db/scratch";
import { type AuditChainReport, verifyAuditChain } from "./audit-chain";

const ROOT = path.resolve(import.meta.dirname, "../..");

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

async function appendRows(client: pg.ClientBase, count: number, actor = "test"): Promise<void> {
  for (let i = 0; i < count; i++) {
    await client.query(
      "INSERT INTO onceboard.audit_log (actor, action, tenant_id, target, detail, ip) VALUES ($1, 'effect.read', 'acme', $2, $3, '127.0.0.1')",
      [actor, `key-${i} "quoted"\n\ttab é 😀`, { n: i, nested: { list: [1, 2.5, null, "x\u0001"] } }],
    );
  }
}

/** Runs `tamper` as the superuser in a transaction, verifies inside it, and rolls it back. */
async function verifyAfter(db: TestDatabase, tamper: (client: pg.Client) => Promise<void>): Promise<AuditChainReport> {
  const client = await connect(db.url);
  try {
    await client.query("BEGIN");
    // What only a superuser may do: skip every trigger, the append-only and the chain's.
    await client.query("SET LOCAL session_replication_role = replica");
    await tamper(client);
    return await verifyAuditChain(client);
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    await client.end();
  }
}

describe("the audit log against the console's own role", () => {
  let db: TestDatabase;
  let console_: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    console_ = await connect(db.consoleUrl);
    await appendRows(console_, 3);
  });
  afterAll(async () => {
    await console_?.end();
    await db?.drop();
  });

  it("connects as a role that is neither superuser nor the table's owner", async () => {
    const { rows } = await console_.query<{ role: string }>("SELECT current_user AS role");
    expect(rows[0]?.role).toBe(EMBEDDED_CONSOLE_ROLE);
    expect(await consoleRoleProblem(db.consoleUrl)).toBeUndefined();
    expect(await consoleRoleProblem(db.url)).toMatch(/a superuser: it can rewrite the audit log; set CONSOLE_DATABASE_URL/);
  });

  const refused: [string, string[]][] = [
    ["UPDATE", ["UPDATE onceboard.audit_log SET result = 'forged'"]],
    ["DELETE", ["DELETE FROM onceboard.audit_log"]],
    ["TRUNCATE", ["TRUNCATE onceboard.audit_log"]],
    [
      "session_replication_role = replica, then DELETE",
      ["SET LOCAL session_replication_role = replica", "DELETE FROM onceboard.audit_log"],
    ],
    [
      "DISABLE TRIGGER, then UPDATE",
      ["ALTER TABLE onceboard.audit_log DISABLE TRIGGER audit_log_append_only", "UPDATE onceboard.audit_log SET result = 'x'"],
    ],
    ["DISABLE TRIGGER ALL", ["ALTER TABLE onceboard.audit_log DISABLE TRIGGER ALL"]],
    [
      "DROP TRIGGER, then TRUNCATE",
      ["DROP TRIGGER audit_log_no_truncate ON onceboard.audit_log", "TRUNCATE onceboard.audit_log"],
    ],
    ["DROP TRIGGER on the chain", ["DROP TRIGGER audit_log_chain ON onceboard.audit_log"]],
    [
      "CREATE TRIGGER",
      [
        "CREATE TRIGGER sneaky BEFORE INSERT ON onceboard.audit_log FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_audit_log_chain()",
      ],
    ],
    ["DROP TABLE", ["DROP TABLE onceboard.audit_log"]],
    ["DROP SCHEMA", ["DROP SCHEMA onceboard CASCADE"]],
    ["ALTER TABLE … OWNER", [`ALTER TABLE onceboard.audit_log OWNER TO ${EMBEDDED_CONSOLE_ROLE}`]],
    [
      "replacing the append-only function",
      [
        "CREATE OR REPLACE FUNCTION onceboard.onceboard_audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$",
      ],
    ],
    [
      "replacing the chain function",
      [
        "CREATE OR REPLACE FUNCTION onceboard.onceboard_audit_log_chain() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
      ],
    ],
    [
      "replacing the hash function",
      [
        "CREATE OR REPLACE FUNCTION onceboard.onceboard_audit_row_hash(prev_hash text, r onceboard.audit_log) RETURNS text LANGUAGE sql AS $$ SELECT 'x' $$",
      ],
    ],
    ["moving the chain head", ["UPDATE onceboard.audit_chain_head SET seq = 0"]],
  ];
  it.each(refused)("refuses %s", async (_name, statements) => {
    await console_.query("BEGIN");
    try {
      let failure: unknown;
      for (const statement of statements) {
        failure = await console_.query(statement).then(
          () => undefined,
          (error: unknown) => error,
        );
        if (failure) break;
      }
      expect((failure as { code?: string } | undefined)?.code, statements.join("; ")).toMatch(/^(42501|2BP01)$/);
    } finally {
      await console_.query("ROLLBACK");
    }
    const { rows } = await console_.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM onceboard.audit_log WHERE result = 'ok'",
    );
    expect(rows[0]?.n).toBe(3);
    expect((await verifyAuditChain(console_)).ok).toBe(true);
  });

  it("overrides what a forged INSERT says about id, seq, at and hash", async () => {
    const { rows } = await console_.query<{ id: number; seq: number; at: Date; hash: string }>(
      `INSERT INTO onceboard.audit_log (id, seq, at, hash, actor, action) VALUES (1, 1, '2001-01-01', 'forged', 'forger', 'x')
       RETURNING id, seq, at, hash`,
    );
    const row = rows[0];
    expect(row?.seq).toBe(4);
    expect(row?.id).toBeGreaterThan(1);
    expect(row?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Math.abs((row?.at.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(await verifyAuditChain(console_)).toMatchObject({ ok: true, rows: 4 });
  });

  it("still maintains the effects partitions (it owns them: DDL needs their owner)", async () => {
    const created = await ensureEffectPartitions(console_, { back: 0, ahead: 40 });
    expect(created).toBeGreaterThan(0);
    const { rows } = await console_.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'onceboard.effects'::regclass ORDER BY c.relname DESC LIMIT 1`,
    );
    await console_.query(`DROP TABLE onceboard.${rows[0]?.name}`);
  });
});

describe("concurrent appends", () => {
  let db: TestDatabase;
  afterAll(async () => {
    await db?.drop();
  });

  it("from several connections form one chain, seq 1 … N with no gap", async () => {
    db = await createTestDatabase();
    const clients = await Promise.all(Array.from({ length: 8 }, () => connect(db.consoleUrl)));
    try {
      await Promise.all(
        clients.map(async (client, index) => {
          for (let round = 0; round < 5; round++) {
            // Some transactions hold the chain for several rows; the others wait their turn.
            await client.query("BEGIN");
            await appendRows(client, 1 + (index % 3), `writer-${index}`);
            await client.query("COMMIT");
          }
        }),
      );
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
    const expected = [0, 1, 2, 3, 4, 5, 6, 7].reduce((sum, index) => sum + 5 * (1 + (index % 3)), 0);
    const client = await connect(db.url);
    try {
      expect(await verifyAuditChain(client)).toMatchObject({ ok: true, rows: expected });
      // Read in pages, as a long log is: the walk carries the chain across them.
      expect(await verifyAuditChain(client, { pageSize: 7 })).toMatchObject({ ok: true, rows: expected });
      const { rows } = await client.query<{ gaps: number; out_of_order: number }>(
        `SELECT count(*) FILTER (WHERE seq <> rn)::int AS gaps,
                count(*) FILTER (WHERE id_rank <> rn)::int AS out_of_order
           FROM (SELECT seq, row_number() OVER (ORDER BY seq) AS rn, row_number() OVER (ORDER BY id) AS id_rank FROM onceboard.audit_log) s`,
      );
      expect(rows[0]).toEqual({ gaps: 0, out_of_order: 0 });
    } finally {
      await client.end();
    }
  });
});

describe("audit verify", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    const client = await connect(db.consoleUrl);
    await appendRows(client, 6);
    await client.end();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("passes an intact log", async () => {
    expect(await verifyAuditChain(db.pool)).toMatchObject({ ok: true, rows: 6 });
  });

  it("finds a superuser's edit", async () => {
    const report = await verifyAfter(db, (c) =>
      c.query("UPDATE onceboard.audit_log SET target = 'edited' WHERE seq = 3").then(() => {}),
    );
    expect(report.problem).toMatchObject({ kind: "changed", seq: 3 });
    expect(report.problem?.message).toMatch(/row seq 3 \(id \d+\) does not match its hash/);
    expect(report.rows).toBe(2);
  });

  it("finds an edit of the time alone", async () => {
    const report = await verifyAfter(db, (c) =>
      c.query("UPDATE onceboard.audit_log SET at = at - interval '1 microsecond' WHERE seq = 5").then(() => {}),
    );
    expect(report.problem).toMatchObject({ kind: "changed", seq: 5 });
  });

  it("finds an edit that recomputed the hash with the database's own function", async () => {
    const report = await verifyAfter(db, async (c) => {
      await c.query("UPDATE onceboard.audit_log SET result = 'refused' WHERE seq = 2");
      await c.query(
        "UPDATE onceboard.audit_log a SET hash = onceboard.onceboard_audit_row_hash((SELECT hash FROM onceboard.audit_log WHERE seq = 1), a) WHERE seq = 2",
      );
    });
    // Row 2 now fits; row 3 was chained to row 2's old hash.
    expect(report.problem).toMatchObject({ kind: "changed", seq: 3 });
  });

  it("finds a deleted row", async () => {
    const report = await verifyAfter(db, (c) => c.query("DELETE FROM onceboard.audit_log WHERE seq = 4").then(() => {}));
    expect(report.problem).toMatchObject({ kind: "removed", seq: 5 });
    expect(report.problem?.message).toMatch(/row seq 4 is missing \(removed\): the chain breaks before row seq 5/);
  });

  it("finds rows cut off the end", async () => {
    const report = await verifyAfter(db, (c) => c.query("DELETE FROM onceboard.audit_log WHERE seq >= 5").then(() => {}));
    expect(report.problem).toMatchObject({ kind: "removed", seq: null });
    expect(report.problem?.message).toMatch(/rows seq 5–6 are missing \(removed from the end\)/);
  });

  it("finds two rows swapped", async () => {
    const report = await verifyAfter(db, async (c) => {
      await c.query("UPDATE onceboard.audit_log SET seq = -seq WHERE seq IN (2, 3)");
      await c.query("UPDATE onceboard.audit_log SET seq = CASE seq WHEN -2 THEN 3 ELSE 2 END WHERE seq IN (-2, -3)");
    });
    expect(report.problem).toMatchObject({ seq: 2 });
    expect(report.ok).toBe(false);
  });

  it("finds a row inserted out of order, even with a hash that fits and the head moved", async () => {
    const report = await verifyAfter(db, async (c) => {
      // Backdated: an id below the last row's, with a hash the database's own function computes.
      await c.query(`INSERT INTO onceboard.audit_log (id, seq, at, actor, action, result, hash)
        SELECT min(id) - 1, (SELECT max(seq) + 1 FROM onceboard.audit_log), now() - interval '1 day', 'forger', 'login', 'ok', ''
          FROM onceboard.audit_log`);
      await c.query(`UPDATE onceboard.audit_log a SET hash = onceboard.onceboard_audit_row_hash(
        (SELECT hash FROM onceboard.audit_log WHERE seq = 6), a) WHERE seq = 7`);
      await c.query("UPDATE onceboard.audit_chain_head SET seq = 7, hash = (SELECT hash FROM onceboard.audit_log WHERE seq = 7)");
    });
    expect(report.problem).toMatchObject({ kind: "out_of_order", seq: 7 });
    expect(report.problem?.message).toMatch(/inserted out of order/);
  });

  it("finds a row appended around the trigger", async () => {
    const report = await verifyAfter(db, async (c) => {
      await c.query(`INSERT INTO onceboard.audit_log (id, seq, actor, action, hash)
        SELECT max(id) + 1, max(seq) + 1, 'forger', 'login', '' FROM onceboard.audit_log`);
      await c.query(`UPDATE onceboard.audit_log a SET hash = onceboard.onceboard_audit_row_hash(
        (SELECT hash FROM onceboard.audit_log WHERE seq = 6), a) WHERE seq = 7`);
    });
    expect(report.problem).toMatchObject({ kind: "out_of_order" });
    expect(report.problem?.message).toMatch(/appended around the trigger: the chain head is at seq 6/);
  });

  it("`npm run audit -- verify`: ok on an intact log, exit 1 naming the row after a superuser's edit", async () => {
    const run = (url: string) =>
      promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/audit.ts", "verify"], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: url, CONSOLE_DATABASE_URL: "" },
      }).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
    const intact = await run(db.url);
    expect(intact.stdout.trim().split("\n").pop()).toBe("audit verify ok rows=6");
    expect(intact.code).toBe(0);

    const client = await connect(db.url);
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL session_replication_role = replica");
      await client.query("UPDATE onceboard.audit_log SET actor = 'someone else' WHERE seq = 4");
      await client.query("COMMIT");
    } finally {
      await client.end();
    }
    const broken = await run(db.url);
    expect(broken.code).toBe(1);
    expect(broken.stdout.trim().split("\n").pop()).toMatch(
      /^audit verify FAILED after 3 intact rows: row seq 4 \(id \d+\) does not match its hash/,
    );
  });
});

describe("the chain's migration", () => {
  it("chains the rows written before it, in id order, and the next append continues the chain", async () => {
    const scratch = await createScratchDatabase(inject("adminDatabaseUrl"), { prefix: "onceboard_chain_upgrade" });
    const before = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-console-baseline-"));
    const client = await connect(scratch.url);
    try {
      // The database as the console's first migration left it.
      await fs.cp(path.join(DEFAULT_MIGRATIONS_DIR, "20261202000000_console"), path.join(before, "20261202000000_console"), {
        recursive: true,
      });
      await migrateConsole(scratch.url, { dir: before });
      await appendRows(client, 4, "before-the-chain");
      // Every console migration after the baseline is applied, the chain's among them.
      expect((await migrateConsole(scratch.url)).applied).toContain("20261203010000_audit_chain");
      await appendRows(client, 2, "after");
      expect(await verifyAuditChain(client)).toMatchObject({ ok: true, rows: 6 });
      const { rows } = await client.query<{ actor: string }>("SELECT actor FROM onceboard.audit_log ORDER BY seq");
      expect(rows.map((r) => r.actor)).toEqual([...Array(4).fill("before-the-chain"), "after", "after"]);
    } finally {
      await client.end();
      await fs.rm(before, { recursive: true, force: true });
      await scratch.drop();
    }
  });
});
