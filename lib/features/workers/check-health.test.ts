import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { ConsoleError, translateDatabaseError } from "../../console/errors";
import { findClosedPort } from "../../db/free-port";
import { checkHealth } from "./check-health";

describe("checkHealth", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it("says only that the database answers and how fast: no version (the route is public)", async () => {
    const health = await checkHealth(db.pool);
    expect(health.ok).toBe(true);
    expect(Object.keys(health.database)).toEqual(["latencyMs"]);
    const { rows } = await db.pool.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    expect(JSON.stringify(health)).not.toContain(rows[0]!.v.split(" ")[0]!);
  });
});

describe("translateDatabaseError", () => {
  it("turns a refused connection into DATABASE_UNAVAILABLE without the address's password", async () => {
    const pg = (await import("pg")).default;
    const port = await findClosedPort();
    const client = new pg.Client({ connectionString: `postgresql://postgres:secret@127.0.0.1:${port}/postgres` });
    const error = await client.connect().then(
      () => null,
      (e: unknown) => e,
    );
    const translated = translateDatabaseError(error);
    expect(translated).toBeInstanceOf(ConsoleError);
    expect((translated as ConsoleError).code).toBe("DATABASE_UNAVAILABLE");
    expect((translated as ConsoleError).message).toBe("cannot reach PostgreSQL (connection refused)");
  });

  it("maps a statement timeout to QUERY_TIMEOUT and leaves query bugs alone", () => {
    expect(
      (translateDatabaseError(Object.assign(new Error("canceling statement"), { code: "57014" })) as ConsoleError).code,
    ).toBe("QUERY_TIMEOUT");
    const bug = Object.assign(new Error('column "nope" does not exist'), { code: "42703" });
    expect(translateDatabaseError(bug)).toBe(bug);
  });
});
