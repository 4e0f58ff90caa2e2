import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken } from "../../lib/auth/tokens";
import { ensureEffectPartitions } from "../../lib/db/partitions";
import { getPrisma } from "../../lib/db/prisma";
import { KEYS_SEED_DAYS_BACK, seedKeys } from "../../lib/features/keys-and-effects/testing/seed-keys";
import { createConsoleTestDatabase, type TestDatabase } from "../database";
import { call } from "./harness";

/**
 * Property-based fuzzing of paths and query strings against the real handlers and database:
 * whatever the path or query, never a 5xx, always JSON, and never another tenant's data (globex's
 * markers never reach an acme token, whatever ?tenant= says).
 */
const GLOBEX_MARKERS = /ch_GLOBEX_SECRET|msg-e2e-4711-globex|globex_only_key|FUZZ_GLOBEX/;

describe("API fuzzing (fast-check)", () => {
  let db: TestDatabase;
  let acme = "";
  let platform = "";

  beforeAll(async () => {
    db = await createConsoleTestDatabase("f");
    await ensureEffectPartitions(db.pool, { back: KEYS_SEED_DAYS_BACK + 1, ahead: 1 });
    await seedKeys(db.pool);
    // Globex keys whose names an acme token might guess.
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, outcome, created_at)
       SELECT 'globex', k, 'x', 'completed', 'once', '{"m":"FUZZ_GLOBEX"}', now() - interval '1 hour'
         FROM unnest(ARRAY['a:1', 'a', 'x:%', 'x:_', 'capture:', ' ', 'odd:a/b c%20?x#y']) AS k`,
    );
    acme = (await createToken({ name: "fuzz", tenantId: "acme", role: "operator" })).secret;
    platform = (await createToken({ name: "fuzz-platform", tenantId: null, role: "admin" })).secret;
  });
  afterAll(async () => {
    await getPrisma().$disconnect();
    await db.drop();
  });

  const segment = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 40 }),
    fc.string({ unit: "binary", maxLength: 20 }),
    fc.constantFrom(
      "a:1",
      "a",
      "x:%",
      "x:_",
      "capture:",
      " ",
      "%",
      "%%",
      "%2F",
      "%E0%A4%A",
      "..",
      ".",
      "release",
      "odd:a/b c%20?x#y",
    ),
  );
  const rawSegment = fc.oneof(
    segment.map((s) => encodeURIComponent(s)),
    fc.stringMatching(/^[A-Za-z0-9%._~:@!$&'()*+,;=-]{0,30}$/),
  );
  const queryValue = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom("", "acme", "globex", "in_progress", "2026-01-01T00:00:00Z", "-1", "0", "201", "1e9", "NaN", "eyJ", "[]"),
  );
  const queryName = fc.constantFrom("q", "tenant", "status", "jobType", "from", "to", "cursor", "limit", "key", "x", "tenant[]");
  const query = fc.array(fc.tuple(queryName, queryValue), { maxLength: 6 }).map((pairs) => {
    const params = new URLSearchParams();
    for (const [n, v] of pairs) params.append(n, v);
    return params.toString();
  });
  const path = fc.oneof(
    fc.tuple(rawSegment).map(([k]) => `/api/v1/effects/${k}`),
    fc.tuple(rawSegment).map(([k]) => `/api/v1/effects/${k}/release`),
    fc.constant("/api/v1/effects"),
    fc.constant("/api/v1/audit"),
    fc.array(rawSegment, { minLength: 1, maxLength: 4 }).map((s) => `/api/v1/${s.join("/")}`),
  );

  it("never answers 5xx, always JSON, never another tenant's data", async () => {
    await fc.assert(
      fc.asyncProperty(path, query, fc.constantFrom("GET", "POST"), fc.boolean(), async (p, q, method, usePlatform) => {
        const url = `${p}${q ? `?${q}` : ""}`;
        let pathname: string;
        try {
          pathname = new URL(url, "http://console.test").pathname;
        } catch {
          return; // not a URL a client could send
        }
        if (!pathname.startsWith("/api/v1/")) return;
        const response = await call(method, url, { authorization: `Bearer ${usePlatform ? platform : acme}` });
        expect(response.status, `${method} ${url}`).toBeLessThan(500);
        expect(response.headers.get("content-type") ?? "", url).toContain("application/json");
        JSON.parse(response.text);
        if (!usePlatform) expect(response.text, `${method} ${url}`).not.toMatch(GLOBEX_MARKERS);
      }),
      { numRuns: 250, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) },
    );
  });
});
