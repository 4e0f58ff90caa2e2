import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createToken } from "../../lib/auth/tokens";
import { getPrisma } from "../../lib/db/prisma";
import { OPERATIONS } from "../../lib/routes/openapi";
import { createTestDatabase, type TestDatabase } from "../database";
import { call } from "./harness";

/**
 * Every time field of every documented query and body, from the OpenAPI listing: a string that is
 * not a time the console accepts answers 400 naming that field, never a 500. The other time fields
 * of the same request hold valid times, so an object refinement comparing them (from before to, a
 * run's window) runs as it would in a real request: with a bad `from` and a good `to`,
 * POST /api/v1/reconciliation/runs threw `from.getTime is not a function` (issue 35, finding 7).
 */
const BAD_TIMES = ["", "x", "0000-01-01T00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-01T00:00:00", "9".repeat(41)];

/** Valid times for the time fields this test is not breaking: a window of a day ending tomorrow. */
const GOOD_TIMES: Record<string, string> = {
  from: new Date(Date.now() - 86_400_000).toISOString(),
  to: new Date(Date.now() + 86_400_000).toISOString(),
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
};

/** The fields besides times an operation's body needs to get as far as its refinements. */
const BODY_BASE: Record<string, Record<string, unknown>> = {
  "POST /api/v1/reconciliation/runs": { provider: "stripe" },
  "POST /api/v1/bulk/acknowledge-findings": { dryRun: true },
  "POST /api/v1/tokens": { name: "time-fields", role: "viewer" },
};

/**
 * A time field is one that takes an ISO 8601 instant and refuses year 0: nothing else in a
 * contract (free text, enums, ids) does both, so a new time field is found without a list here.
 */
function timeFields(schema: z.ZodType | undefined): string[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>)
    .filter(([, field]) => field.safeParse("2026-12-01T00:00:00Z").success && !field.safeParse("0000-01-01T00:00:00Z").success)
    .map(([name]) => name);
}

interface Case {
  operation: string;
  method: string;
  path: string;
  where: "query" | "body";
  field: string;
  fields: string[];
}

function cases(): Case[] {
  const found: Case[] = [];
  for (const [template, methods] of Object.entries(OPERATIONS)) {
    for (const [method, operation] of Object.entries(methods)) {
      // Path parameters are ids, keys, names and choices, never times (timeFields on them would say so):
      // a choice takes its first option, anything else an id, so the request reaches its query.
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
        const field = (operation.path as z.ZodObject | undefined)?.shape[name];
        return field instanceof z.ZodEnum ? String(field.options[0]) : "00000000-0000-4000-8000-000000000001";
      });
      for (const where of ["query", "body"] as const) {
        const fields = timeFields(operation[where]);
        for (const field of fields)
          found.push({
            operation: `${method.toUpperCase()} ${template}`,
            method: method.toUpperCase(),
            path,
            where,
            field,
            fields,
          });
      }
    }
  }
  return found;
}

describe("every time field of every route", () => {
  let db: TestDatabase;
  let admin = "";

  beforeAll(async () => {
    db = await createTestDatabase();
    process.env.DATABASE_URL = db.url;
    process.env.ONCEBOARD_SECRET = "t".repeat(40);
    process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
    process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
    admin = (await createToken({ name: "time-fields", tenantId: null, role: "admin" })).secret;
  });
  afterAll(async () => {
    await getPrisma().$disconnect();
    await db.drop();
  });

  it("finds the time fields of the bodies and queries it must cover", () => {
    const named = new Set(cases().map((c) => `${c.operation} ${c.where}.${c.field}`));
    for (const expected of [
      "POST /api/v1/reconciliation/runs body.from",
      "POST /api/v1/reconciliation/runs body.to",
      "POST /api/v1/bulk/acknowledge-findings body.from",
      "POST /api/v1/tokens body.expiresAt",
      "GET /api/v1/reconciliation/findings query.from",
      "GET /api/v1/audit query.to",
      "GET /api/v1/overview query.from",
      "GET /api/v1/gaps query.to",
    ])
      expect(named).toContain(expected);
    // Every body with a time field has its base here, or the test would stop at a missing field.
    for (const c of cases()) if (c.where === "body") expect(Object.keys(BODY_BASE)).toContain(c.operation);
  });

  it("answers 400 naming the field for a string that is not a time, whatever the other fields hold", async () => {
    const failures: string[] = [];
    for (const c of cases()) {
      for (const bad of BAD_TIMES) {
        const values: Record<string, unknown> = { ...(c.where === "body" ? BODY_BASE[c.operation] : {}) };
        for (const other of c.fields) values[other] = GOOD_TIMES[other] ?? GOOD_TIMES.from;
        values[c.field] = bad;
        const url =
          c.where === "query" ? `${c.path}?${new URLSearchParams(values as Record<string, string>).toString()}` : c.path;
        const response = await call(
          c.method,
          url,
          { authorization: `Bearer ${admin}`, origin: "http://console.test" },
          c.where === "body" ? values : undefined,
        );
        const label = `${c.operation} ${c.where}.${c.field}=${JSON.stringify(bad)}`;
        if (response.status !== 400) {
          failures.push(`${label} → ${response.status} ${response.text.slice(0, 200)}`);
          continue;
        }
        const issues = (JSON.parse(response.text).error?.issues ?? []) as { path: string }[];
        if (!issues.some((issue) => issue.path === c.field))
          failures.push(`${label} → 400 without naming ${c.field}: ${response.text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
