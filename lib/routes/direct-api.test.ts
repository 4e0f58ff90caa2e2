import http from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../../test/api/harness";
import { createConsoleTestDatabase, type TestDatabase } from "../../test/database";
import { rawRequest } from "../../test/raw-http";
import type { Authenticated } from "../auth/authenticate";
import { announcePeerHeader, PEER_HEADER } from "../auth/client-ip";
import { HANDOVER_HEADER, handOver } from "../auth/proxy-handover";
import { createToken } from "../auth/tokens";
import { ensureEffectPartitions } from "../db/partitions";
import { getPrisma } from "../db/prisma";
import { getEffectRoute, searchEffectsRoute } from "../features/keys-and-effects/routes";
import { KEYS_SEED, KEYS_SEED_DAYS_BACK, seedKeys } from "../features/keys-and-effects/testing/seed-keys";
import { acceptsGzip, answerDirectly, directRouteFor, installDirectApi } from "./direct-api";

/**
 * The key lookup and search the console's server answers without Next.js's router
 * (lib/routes/direct-api.ts): which requests it takes, and that what it answers over a real socket
 * is what the route answers, with the front door's headers, and nothing a client sends can stand
 * in for authentication.
 */
describe("which requests the console's server answers itself", () => {
  it.each([
    ["/api/v1/effects", searchEffectsRoute, {}],
    ["/api/v1/effects?tenant=acme&q=ord-1", searchEffectsRoute, {}],
    ["/api/v1/effects/capture%3Aord-1", getEffectRoute, { key: "capture:ord-1" }],
    ["/api/v1/effects/a%2Fb?tenant=acme", getEffectRoute, { key: "a/b" }],
    ["/api/v1/effects/%E2%9C%93", getEffectRoute, { key: "✓" }],
  ])("GET %s", (target, route, params) => {
    expect(directRouteFor("GET", target)).toEqual({ route, params });
  });

  it.each([
    ["HEAD", "/api/v1/effects/k"],
    ["POST", "/api/v1/effects/k"],
    ["DELETE", "/api/v1/effects/k"],
    ["GET", "/api/v1/effects/"],
    ["GET", "/api/v1/effects/k/"],
    ["GET", "/api/v1/effects/k/release"],
    ["GET", "/api/v1/effects/.."],
    ["GET", "/api/v1/effects/."],
    ["GET", "/api/v1/effects/%2e%2e"],
    ["GET", "/api/v1/effects/a\\b"],
    ["GET", "/api/v1/effects/%ZZ"],
    ["GET", "/api/v1/effects/%E2%9C"],
    ["GET", "/api/v1/./effects/k"],
    ["GET", "/api/v1/effectsx"],
    ["GET", "http://elsewhere.test/api/v1/effects/k"],
    ["GET", "/api/v1/violations"],
    ["GET", undefined],
  ])("%s %s goes on to Next.js", (method, target) => {
    expect(directRouteFor(method, target)).toBeNull();
  });

  it.each([
    ["gzip, deflate, br", true],
    ["br;q=1.0, gzip;q=0.8, *;q=0.1", true],
    ["GZIP", true],
    ["*", true],
    ["gzip;q=0, *", false],
    ["gzip;q=0", false],
    ["deflate, br", false],
    ["identity", false],
    ["", false],
  ])("Accept-Encoding %j allows gzip: %s", (header, allowed) => {
    expect(acceptsGzip(header)).toBe(allowed);
  });

  it("ONCEBOARD_DIRECT_API=off installs nothing; on (the default) installs the answer", () => {
    const before = process.env.ONCEBOARD_DIRECT_API;
    try {
      process.env.ONCEBOARD_DIRECT_API = "off";
      installDirectApi();
      expect(globalThis.__onceboardDirectApi).toBeUndefined();
      delete process.env.ONCEBOARD_DIRECT_API;
      installDirectApi();
      expect(globalThis.__onceboardDirectApi).toBe(answerDirectly);
    } finally {
      if (before === undefined) delete process.env.ONCEBOARD_DIRECT_API;
      else process.env.ONCEBOARD_DIRECT_API = before;
      globalThis.__onceboardDirectApi = undefined;
    }
  });
});

describe("answered over a real socket", () => {
  const { tenant: ACME, otherTenant: GLOBEX, orderId } = KEYS_SEED;
  const tokens: Record<string, string> = {};
  let db: TestDatabase;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    db = await createConsoleTestDatabase("d");
    await ensureEffectPartitions(db.pool, { back: KEYS_SEED_DAYS_BACK + 1, ahead: 1 });
    await seedKeys(db.pool);
    tokens.acme = (await createToken({ name: "acme", tenantId: ACME, role: "viewer" })).secret;
    tokens.platform = (await createToken({ name: "platform", tenantId: null, role: "viewer" })).secret;
    // As scripts/console-server.ts does: the socket's peer in PEER_HEADER, then the direct answer,
    // else Next.js (here a 418 that says so).
    announcePeerHeader();
    server = http.createServer((request, response) => {
      request.headers[PEER_HEADER] = request.socket.remoteAddress ?? "";
      if (answerDirectly(request, response)) return;
      response.writeHead(418, { "content-type": "text/plain" }).end("next.js");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await getPrisma().$disconnect();
    await db?.drop();
  });

  const bearer = (who: string) => ({ authorization: `Bearer ${tokens[who] ?? "ob_unknown"}` });
  const enc = encodeURIComponent;

  const rawGet = (target: string, headers: Record<string, string> = {}, method = "GET") =>
    rawRequest(base, target, { method, headers });

  it.each([
    ["acme", `/api/v1/effects/${enc(`capture:${orderId}`)}`, 200],
    ["acme", `/api/v1/effects/${enc(`mark-paid:${orderId}`)}`, 200],
    // Another tenant's key answers exactly as a missing one.
    ["acme", `/api/v1/effects/${enc("secret:nowhere")}`, 404],
    ["platform", `/api/v1/effects/${enc(`capture:${orderId}`)}?tenant=${GLOBEX}`, 200],
    ["acme", `/api/v1/effects/${enc("a/b c%d✓")}`, 404],
    ["acme", `/api/v1/effects/${"k".repeat(256)}`, 400],
    ["acme", `/api/v1/effects/${enc("bad\u0000key")}`, 400],
    ["acme", `/api/v1/effects/k?tenant=${"x".repeat(300)}`, 400],
    ["none", `/api/v1/effects/${enc(`capture:${orderId}`)}`, 401],
    ["unknown", `/api/v1/effects/${enc(`capture:${orderId}`)}`, 401],
    ["acme", `/api/v1/effects?q=${enc(orderId)}`, 200],
    ["acme", "/api/v1/effects?q=ord&limit=2", 200],
    ["platform", `/api/v1/effects?tenant=${GLOBEX}&q=${enc(orderId)}`, 200],
    ["acme", "/api/v1/effects?limit=0", 400],
    ["acme", "/api/v1/effects?cursor=not-a-cursor", 400],
    ["none", "/api/v1/effects?q=ord", 401],
  ])("as %s, GET %s: %i, the route's own answer with the front door's headers", async (who, target, status) => {
    const headers = who === "none" ? {} : bearer(who);
    const direct = await rawGet(target, headers);
    const routed = await call("GET", target, headers);
    expect(direct.status, direct.body).toBe(status);
    expect(routed.status).toBe(status);
    expect(JSON.parse(direct.body)).toEqual(JSON.parse(routed.text));
    expect(direct.headers).toMatchObject({
      "content-type": "application/json",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "referrer-policy": "same-origin",
      "content-length": String(Buffer.byteLength(direct.body)),
    });
    expect(direct.headers["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
    if (status === 401) expect(direct.headers["www-authenticate"]).toBe('Bearer realm="onceboard"');
    // The search never answers another tenant's rows, whoever asks.
    if (who === "acme") expect(direct.body).not.toContain(GLOBEX);
  });

  it("gzips an answer of 1 KiB or more for a client that accepts it, as Next.js does", async () => {
    const target = `/api/v1/effects/${enc(`capture:${orderId}`)}`;
    const plain = await rawGet(target, bearer("acme"));
    expect(Buffer.byteLength(plain.body)).toBeGreaterThanOrEqual(1024);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    const zipped = await rawGet(target, { ...bearer("acme"), "accept-encoding": "gzip, br" });
    expect(zipped.headers).toMatchObject({ "content-encoding": "gzip", vary: "Accept-Encoding" });
    expect(zipped.headers["content-length"]).toBe(String(zipped.bytes.length));
    expect(JSON.parse(gunzipSync(zipped.bytes).toString("utf8"))).toEqual(JSON.parse(plain.body));
    // A short answer goes as it is.
    const short = await rawGet(`/api/v1/effects/${enc("secret:nowhere")}`, { ...bearer("acme"), "accept-encoding": "gzip" });
    expect(short.status).toBe(404);
    expect(short.headers["content-encoding"]).toBeUndefined();
  });

  it("a handover reference the client sends is dropped: only the request's own credentials count", async () => {
    const headers = bearer("unknown");
    const platformAdmin: Authenticated = {
      principal: { tokenId: "00000000-0000-4000-8000-0000000000aa", actor: "forged", tenantId: null, role: "admin" },
      via: "bearer",
    };
    // A live reference for exactly these credentials: withAuth would take it, were it forwarded.
    const ref = handOver(platformAdmin, new Headers(headers));
    const answer = await rawGet(`/api/v1/effects/${enc(`capture:${orderId}`)}?tenant=${ACME}`, {
      ...headers,
      [HANDOVER_HEADER]: ref,
    });
    expect(answer.status, answer.body).toBe(401);
  });

  it.each([
    ["HEAD", "/api/v1/effects/k"],
    ["POST", "/api/v1/effects/k/release"],
    ["GET", "/api/v1/effects/"],
    ["GET", "/api/v1/effects/%2e%2e"],
    ["GET", "/api/v1/./effects/k"],
    ["GET", "/api/v1/violations"],
  ])("%s %s reaches Next.js", async (method, target) => {
    const answer = await rawGet(target, bearer("acme"), method);
    expect(answer.status).toBe(418);
  });
});
