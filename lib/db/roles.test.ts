import { randomBytes } from "node:crypto";
import pg from "pg";
import PgBoss from "pg-boss";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { provisionDatabase } from "./provision";
import {
  ConsoleRoleError,
  consoleRoleProblem,
  EMBEDDED_CONSOLE_ROLE,
  giveSchemasToConsoleRole,
  grantConsoleRole,
  urlAsRole,
} from "./roles";
import { createScratchDatabase, type ScratchDatabase } from "./scratch";

/**
 * The README's two-role setup on an existing server: a non-superuser owner that migrates, and a
 * console role of the user's choosing named by CONSOLE_DATABASE_URL. Roles are the server's, so
 * each run makes its own and drops them afterwards.
 */
describe("DATABASE_URL with CONSOLE_DATABASE_URL", () => {
  const suffix = randomBytes(4).toString("hex");
  const ownerRole = `onceboard_owner_t${suffix}`;
  const consoleRole = `onceboard_console_t${suffix}`;
  const adminUrl = inject("adminDatabaseUrl");
  let database: ScratchDatabase;
  let ownerUrl: string;
  let consoleUrl: string;
  const saved = { ...process.env };

  const onAdmin = async (sql: string) => {
    const admin = new pg.Client(adminUrl);
    await admin.connect();
    try {
      await admin.query(sql);
    } finally {
      await admin.end();
    }
  };

  beforeAll(async () => {
    await onAdmin(`CREATE ROLE ${ownerRole} LOGIN PASSWORD 'owner-secret'`);
    await onAdmin(`CREATE ROLE ${consoleRole} LOGIN PASSWORD 'console-secret'`);
    database = await createScratchDatabase(adminUrl, { prefix: "onceboard_roles" });
    await onAdmin(`ALTER DATABASE ${database.name} OWNER TO ${ownerRole}`);
    const plain = new URL(database.url);
    plain.search = "";
    ownerUrl = urlAsRole(plain.toString(), ownerRole, "owner-secret");
    consoleUrl = urlAsRole(plain.toString(), consoleRole, "console-secret");
  });
  afterAll(async () => {
    process.env = saved;
    await database?.drop();
    await onAdmin(`DROP ROLE IF EXISTS ${consoleRole}`).catch(() => {});
    await onAdmin(`DROP ROLE IF EXISTS ${ownerRole}`).catch(() => {});
  });

  async function provision(env: Record<string, string>): Promise<string[]> {
    const lines: string[] = [];
    process.env = { ...saved, ...env };
    try {
      const db = await provisionDatabase({ log: (line) => lines.push(line) });
      await db.stop();
    } finally {
      process.env = saved;
    }
    return lines;
  }

  it("without CONSOLE_DATABASE_URL: migrates, and warns that the console's role owns audit_log", async () => {
    const lines = await provision({ DATABASE_URL: ownerUrl, CONSOLE_DATABASE_URL: "" });
    expect(lines).toContain("applied migration 20261203010000_audit_chain");
    expect(lines.filter((line) => line.startsWith("warning:"))).toEqual([
      `warning: the console connects as ${ownerRole}, which owns audit_log: it can rewrite the audit log; set CONSOLE_DATABASE_URL to a role that does not own it (README: Using an existing PostgreSQL)`,
    ]);
  });

  it("refuses a CONSOLE_DATABASE_URL on another database than DATABASE_URL's", async () => {
    const elsewhere = new URL(consoleUrl);
    elsewhere.pathname = "/postgres";
    await expect(provision({ DATABASE_URL: ownerUrl, CONSOLE_DATABASE_URL: elsewhere.toString() })).rejects.toThrow(
      /^CONSOLE_DATABASE_URL names 127\.0\.0\.1:\d+\/postgres, DATABASE_URL .*: both must name the same server and database$/,
    );
  });

  it("refuses, saying how, while the owner cannot hand the effects partitions to the console role", async () => {
    const owner = new pg.Client(ownerUrl);
    await owner.connect();
    try {
      const failure = await grantConsoleRole(owner, consoleRole).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ConsoleRoleError);
      expect((failure as Error).message).toMatch(new RegExp(`GRANT ${consoleRole} TO the owner that migrates`));
    } finally {
      await owner.end();
    }
  });

  it("with it (and the README's GRANT): no warning, and the console role appends, maintains partitions, and rewrites nothing", async () => {
    await onAdmin(`GRANT ${consoleRole} TO ${ownerRole}`);
    const lines = await provision({ DATABASE_URL: ownerUrl, CONSOLE_DATABASE_URL: consoleUrl });
    expect(lines.filter((line) => line.startsWith("warning:"))).toEqual([]);
    expect(await consoleRoleProblem(consoleUrl)).toBeUndefined();

    const client = new pg.Client(consoleUrl);
    await client.connect();
    try {
      await client.query("INSERT INTO onceboard.audit_log (actor, action) VALUES ('console', 'probe')");
      await client.query("SELECT count(*) FROM onceboard.api_tokens");
      await client.query("UPDATE onceboard.api_tokens SET name = name");
      const refused = await client.query("DELETE FROM onceboard.audit_log").catch((error: { code?: string }) => error.code);
      expect(refused).toBe("42501");
      const dropped = await client.query("DROP TABLE onceboard.audit_log").catch((error: { code?: string }) => error.code);
      expect(dropped).toBe("42501");
      // The partitions the owner made at startup are the console role's: retention can drop them.
      const { rows } = await client.query<{ owner: string }>(
        `SELECT DISTINCT pg_get_userbyid(c.relowner) AS owner FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'onceboard.effects'::regclass`,
      );
      expect(rows).toEqual([{ owner: consoleRole }]);
      const day = new Date(Date.now() + 31 * 86_400_000).toISOString().slice(0, 10);
      await client.query("SELECT onceboard.onceboard_ensure_partitions($1::date, $1::date)", [day]);
      await client.query(`DROP TABLE onceboard.effects_p${day.replaceAll("-", "")}`);
    } finally {
      await client.end();
    }
  });
});

describe("the demo's schemas", () => {
  it("made by the owner before (a data directory from an older start) are handed to the console role whole", async () => {
    const scratch = await createScratchDatabase(inject("adminDatabaseUrl"), { prefix: "onceboard_roles_demo" });
    const plain = new URL(scratch.url);
    plain.search = "";
    const ownerUrl = plain.toString();
    try {
      const asOwner = new PgBoss({ connectionString: ownerUrl, schema: "pgboss_roles_test" });
      asOwner.on("error", () => {});
      await asOwner.start();
      await asOwner.createQueue("before");
      await asOwner.send("before", { n: 1 });
      await asOwner.stop({ graceful: false });
      const owner = new pg.Client(ownerUrl);
      await owner.connect();
      try {
        await owner.query("CREATE SCHEMA demo_roles_test; CREATE TABLE demo_roles_test.orders (id bigserial PRIMARY KEY)");
        await giveSchemasToConsoleRole(owner, EMBEDDED_CONSOLE_ROLE, ["pgboss_roles_test", "demo_roles_test", "not_made_yet"]);
        const { rows } = await owner.query(
          `SELECT c.oid::regclass::text AS name FROM pg_class c
            WHERE c.relnamespace IN ('pgboss_roles_test'::regnamespace, 'demo_roles_test'::regnamespace)
              AND pg_get_userbyid(c.relowner) <> $1`,
          [EMBEDDED_CONSOLE_ROLE],
        );
        expect(rows).toEqual([]);
      } finally {
        await owner.end();
      }
      // pg-boss, as the console role, uses what the owner made and makes queues of its own.
      const consoleUrl = urlAsRole(ownerUrl, EMBEDDED_CONSOLE_ROLE, inject("consoleRolePassword"));
      const asConsole = new PgBoss({ connectionString: consoleUrl, schema: "pgboss_roles_test" });
      asConsole.on("error", () => {});
      await asConsole.start();
      await asConsole.createQueue("after");
      await asConsole.send("after", { n: 2 });
      expect((await asConsole.fetch("before"))?.length).toBe(1);
      expect((await asConsole.fetch("after"))?.length).toBe(1);
      await asConsole.stop({ graceful: false });
      const client = new pg.Client(consoleUrl);
      await client.connect();
      await client.query("INSERT INTO demo_roles_test.orders DEFAULT VALUES");
      await client.query("DROP SCHEMA demo_roles_test CASCADE");
      await client.end();
    } finally {
      await scratch.drop();
    }
  });
});
