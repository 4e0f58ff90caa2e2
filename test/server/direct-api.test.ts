import type http from "node:http";
import { describe, expect, inject, it } from "vitest";
import { rawRequest } from "../raw-http";
import { type Credential, HOSTILE_KEY, headersFor, SERVER_TENANTS, tenantRows } from "./tier";

/**
 * Through the built console under `npm start`: the key lookup and search are answered by the
 * console's own server (lib/routes/direct-api.ts, installed by instrumentation-node.ts), and what they
 * answer is what Next.js's router answers for the same route. Next.js resolves a dot segment
 * (`/api/v1/./effects/…`) to the same route, and the console's server leaves such a path to it,
 * so one console answers each question both ways. Next.js marks every answer with a Vary header
 * (Accept-Encoding, as it may compress; a route's also names its RSC headers); the direct answer
 * has none, which is how the test knows who answered.
 */
const tier = inject("serverTier");

/** Headers that differ between any two answers, or by who answered: not compared. */
const PER_ANSWER = new Set(["date", "vary", "content-length", "transfer-encoding", "content-security-policy"]);

describe.skipIf(tier.skipped !== undefined)(
  `the key lookup and search without Next.js's router${tier.skipped ? ` (SKIPPED: ${tier.skipped})` : ""}`,
  () => {
    if (tier.skipped !== undefined) {
      it.skip(tier.skipped, () => {});
      return;
    }
    const { baseUrl } = tier;
    const [acme, globex] = SERVER_TENANTS;
    const credential = (label: string): Credential => {
      const found = tier.credentials.find((c) => c.label === label);
      if (!found) throw new Error(`no credential ${label}`);
      return found;
    };

    const rawGet = (target: string, who: Credential) => rawRequest(baseUrl, target, { headers: headersFor(who) });

    const enc = encodeURIComponent;
    it.each([
      [`${acme} viewer`, `/effects/${enc(tenantRows(acme).completedKey)}`, 200],
      [`${acme} viewer (session)`, `/effects/${enc(tenantRows(acme).stuckKey)}`, 200],
      [`${acme} viewer`, `/effects/${enc(HOSTILE_KEY)}`, 200],
      // Another tenant's key answers as a missing one.
      [`${acme} viewer`, `/effects/${enc(tenantRows(globex).completedKey)}`, 404],
      [`platform viewer`, `/effects/${enc(tenantRows(globex).completedKey)}?tenant=${globex}`, 200],
      [`${acme} viewer`, `/effects/${"k".repeat(256)}`, 400],
      [`${acme} viewer`, `/effects?q=${enc(`ord-${acme}`)}`, 200],
      [`platform viewer`, `/effects?tenant=${globex}&q=capture`, 200],
      [`${acme} viewer`, "/effects?limit=0", 400],
      ["revoked acme admin", `/effects/${enc(tenantRows(acme).completedKey)}`, 401],
      ["revoked acme admin (session)", "/effects?q=ord", 401],
    ])("as %s, GET /api/v1%s: %i from the console's server, the same as from Next.js's router", async (who, path, status) => {
      const direct = await rawGet(`/api/v1${path}`, credential(who));
      const routed = await rawGet(`/api/v1/.${path}`, credential(who));
      expect(direct.status, direct.body).toBe(status);
      expect(routed.status, routed.body).toBe(status);
      expect(direct.headers.vary, "answered by Next.js's router").toBeUndefined();
      expect(routed.headers.vary, "answered by the console's server").toMatch(/Accept-Encoding/);
      expect(JSON.parse(direct.body)).toEqual(JSON.parse(routed.body));
      const compared = (headers: http.IncomingHttpHeaders) =>
        Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_ANSWER.has(name)));
      expect(compared(direct.headers)).toEqual(compared(routed.headers));
      expect(direct.headers["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
    });
  },
);
