import fc from "fast-check";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { NAV_ITEMS } from "../../components/shell/nav-items";
import { type Credential, type DocumentedOperation, fetchAs, inBatches, leaksIn, openApiDocument, operationsOf } from "./tier";

/**
 * Hostile input through the built console, bounded and reproducible (fixed seed): the inputs that
 * once answered 500, then generated values — NUL, control characters, lone surrogates, malformed
 * and truncated percent-escapes, numbers past every column's range, other tenants' names — in
 * every parameter of every operation of the OpenAPI document and in the query of every page.
 * Never a 5xx; never another tenant's data in what acme's reader gets.
 */
const tier = inject("serverTier");
const SEED = 20_261_201;

/**
 * Each once answered 500: NUL in a name, year 0000, a cursor past bigint, a path that is not UTF-8.
 * (The advisor takes no tenant: an unknown parameter is ignored, so only its jobType is here.)
 */
const ONCE_500: string[] = [
  ...["/api/v1/overview", "/api/v1/gaps"].flatMap((route) => [`${route}?jobType=a%00b`, `${route}?tenant=a%00b`]),
  "/api/v1/retention/advice?jobType=a%00b",
  "/api/v1/effects?to=0000-01-01T00:00:00Z",
  "/api/v1/effects?from=0000-01-01T00:00:00Z",
  "/api/v1/audit?from=0000-01-01T00:00:00Z",
  "/api/v1/audit?to=0000-01-01T00:00:00Z",
  "/api/v1/audit?cursor=9999999999999999999",
  "/overview/runbook/%ZZ",
  "/overview/runbook/%C3",
];

/** Error pages of another kind: a runbook that does not exist, a page that does not exist. */
const NOT_FOUND_PAGES = ["/overview/runbook/NoSuchAlert", "/overview/runbook/%2E%2E%2Fpackage.json", "/no-such-page"];

/** What a browser must get on every answer, an error page's included. */
const SECURITY_HEADERS = ["x-content-type-options", "x-frame-options", "referrer-policy", "content-security-policy"];

// Pieces of a raw (already percent-encoded) value: the nasty ones and some ordinary ones around them.
const rawPiece = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("%00", "%01", "%0A", "%0D", "%09", "%1F", "%7F", "%C2%85", "%E2%80%A8") },
  { weight: 3, arbitrary: fc.constantFrom("%ZZ", "%C3", "%FF", "%C0%AF", "%ED%A0%80", "%E2%82", "%", "%0", "%%", "%2") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "9999999999999999999",
      "-1",
      "0",
      "1e309",
      "NaN",
      "0x10",
      "99999",
      "0000-01-01T00:00:00Z",
      "10000-01-01",
      "1969-12-31T23:59:59Z",
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom("globex", "initech", "acme", "%2F", "%3F", "%23", "%26", "+", "%20", "%C3%BC", "%F0%9F%98%80"),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map(encodeURIComponent) },
);
// One piece alone half the time: a time or a number is only out of range when nothing surrounds it.
const rawValue = fc.oneof(
  rawPiece,
  fc.array(rawPiece, { minLength: 2, maxLength: 4 }).map((pieces) => pieces.join("")),
);

/**
 * A request against one operation with one of its parameters generated and the others left out
 * (a path parameter kept plain): a schema reports every bad field at once, so a second bad value
 * would turn the one under test into a 400 it never reaches the database with.
 */
function requestFor(operation: DocumentedOperation): fc.Arbitrary<{ method: string; target: string }> {
  const fill = (fuzzed: string | undefined, value: string) => {
    let target = operation.template;
    for (const p of operation.parameters.filter((p) => p.in === "path"))
      target = target.replace(`{${p.name}}`, p.name === fuzzed ? value : "1");
    const query = operation.parameters.find((p) => p.in === "query" && p.name === fuzzed);
    return { method: operation.method, target: query ? `${target}?${query.name}=${value}` : target };
  };
  const names = operation.parameters.filter((p) => p.in === "query" || p.in === "path").map((p) => p.name);
  if (names.length === 0) return fc.constant(fill(undefined, ""));
  return fc.tuple(fc.constantFrom(...names), rawValue).map(([name, value]) => fill(name, value));
}

describe.skipIf(tier.skipped !== undefined)(
  `fuzz through the real server${tier.skipped ? ` (SKIPPED: ${tier.skipped})` : ""}`,
  () => {
    if (tier.skipped !== undefined) {
      it.skip(tier.skipped, () => {});
      return;
    }
    const { baseUrl } = tier;
    const bearer = (label: string) => {
      const found = tier.credentials.find((c) => c.label === label);
      if (!found) throw new Error(`no credential "${label}"`);
      return found;
    };
    const acmeAdmin = bearer("acme admin");
    const acmeViewer = bearer("acme viewer");
    const acmeViewerSession = bearer("acme viewer (session)");
    const platformAdmin = bearer("platform admin");
    let operations: DocumentedOperation[] = [];

    beforeAll(async () => {
      operations = operationsOf(await openApiDocument(baseUrl, platformAdmin.kind === "bearer" ? platformAdmin.secret : ""));
    });

    /** Sends each request as each caller; returns what went wrong. */
    const check = async (requests: { method: string; target: string }[], callers: Credential[], pages = false) =>
      (
        await inBatches(
          requests.flatMap((request) => callers.map((caller) => ({ ...request, caller }))),
          6,
          async ({ method, target, caller }) => {
            const response = await fetchAs(baseUrl, target, caller, { method, body: method === "GET" ? undefined : "{}" });
            const body = await response.text();
            const who = `${caller.label} ${method} ${target}`;
            const problems: string[] = [];
            if (response.status >= 500) problems.push(`${who}: ${response.status} ${body.slice(0, 200)}`);
            // A page answers an invalid query with a 400 that says so, never a 200 with the error in it.
            const invalid = body.includes("INVALID_INPUT");
            if (pages && invalid && response.status !== 400) problems.push(`${who}: INVALID_INPUT with a ${response.status}`);
            if (pages && response.status === 400 && !invalid) problems.push(`${who}: a 400 that does not say INVALID_INPUT`);
            if (caller.kind !== "none" && caller.tenant)
              for (const leak of leaksIn(body, caller.tenant, target)) problems.push(`${who}: holds ${leak}`);
            return problems;
          },
        )
      ).flat();

    it("answers each input that once gave a 500, and a missing page, with a 4xx carrying the security headers", async () => {
      for (const caller of [platformAdmin, acmeViewer, acmeViewerSession]) {
        const answers = await inBatches([...ONCE_500, ...NOT_FOUND_PAGES], 6, async (target) => {
          const response = await fetchAs(baseUrl, target, caller);
          const body = await response.text();
          return { target, status: response.status, headers: response.headers, body };
        });
        for (const { target, status, headers, body } of answers) {
          const who = `${caller.label} GET ${target}`;
          expect(status, `${who}: ${body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
          expect(status, who).toBeLessThan(500);
          // A platform admin may ask every route; acme's viewer may be refused a platform-only one first.
          if (target.startsWith("/api/") && caller === platformAdmin)
            expect(JSON.parse(body).error.code, who).toBe("INVALID_INPUT");
          for (const header of SECURITY_HEADERS) expect(headers.get(header), `${who}: ${header}`).toBeTruthy();
        }
      }
    });

    it("refuses a body's text field holding NUL, a control character or half a surrogate pair, naming it", async () => {
      const nasty = fc.constantFrom("\u0000", "\u0001", "\n", "\u001f", "\u007f", "\ud800", "\udfff");
      const reasons = fc.sample(
        fc.tuple(fc.string({ maxLength: 6 }), nasty, fc.string({ maxLength: 6 })).map((parts) => `why${parts.join("")}`),
        { seed: SEED, numRuns: 30 },
      );
      const answers = await inBatches(reasons, 6, async (reason) => {
        const response = await fetchAs(baseUrl, "/api/v1/retention/settings", platformAdmin, {
          method: "PUT",
          body: JSON.stringify({ reason }),
        });
        return { reason, status: response.status, body: (await response.json()) as { error?: { issues?: { path: string }[] } } };
      });
      for (const { reason, status, body } of answers) {
        expect(status, JSON.stringify(reason)).toBe(400);
        expect(
          body.error?.issues?.map((issue) => issue.path),
          JSON.stringify(reason),
        ).toEqual(["reason"]);
      }
    });

    it("never answers 5xx nor shows acme's reader another tenant's data, whatever is in a route's parameters", async () => {
      expect(operations.length).toBeGreaterThan(10);
      const requests = fc.sample(fc.oneof(...operations.map(requestFor)), { seed: SEED, numRuns: 400 });
      expect(await check(requests, [acmeAdmin])).toEqual([]);
    });

    it("never answers 5xx nor shows acme's reader another tenant's data, whatever is in a page's query", async () => {
      // A page's query speaks the API's parameter names (overview, keys, gaps, retention): every name the document knows.
      const names = [...new Set(operations.flatMap((op) => op.parameters.filter((p) => p.in === "query").map((p) => p.name)))];
      // One parameter at a time, as for the routes: nav pages only (a runbook reads no query).
      const pageRequest = fc
        .tuple(fc.constantFrom(...NAV_ITEMS.map((item) => item.href)), fc.constantFrom(...names), rawValue)
        .map(([page, name, value]) => ({ method: "GET", target: `${page}?${name}=${value}` }));
      const requests = fc.sample(pageRequest, { seed: SEED, numRuns: 120 });
      const pathRequests = fc
        .sample(rawValue, { seed: SEED, numRuns: 20 })
        .map((value) => ({ method: "GET", target: `/overview/runbook/${value}` }));
      expect(await check([...requests, ...pathRequests], [acmeViewerSession], true)).toEqual([]);
    });
  },
);
