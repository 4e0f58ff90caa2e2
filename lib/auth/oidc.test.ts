import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as logoutRoute from "../../app/api/auth/logout/route";
import * as callbackRoute from "../../app/api/auth/oidc/callback/route";
import * as startRoute from "../../app/api/auth/oidc/start/route";
import * as effectsRoute from "../../app/api/v1/effects/route";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { startTestProvider, TEST_CLIENT_ID, TEST_CLIENT_SECRET, type TestProvider } from "../../test/oidc/test-provider";
import { getPrisma } from "../db/prisma";
import { authenticate } from "./authenticate";
import { oidcSettings } from "./oidc-client";
import { OIDC_FLOW_COOKIE } from "./oidc-flow";
import { completeOidcSignIn } from "./oidc-sign-in";
import { SESSION_COOKIE } from "./session";

/**
 * Single sign-on against a real OpenID Provider (oidc-provider, test/oidc/test-provider.ts): the
 * console's start and callback route handlers are called in-process as Next calls them, the
 * provider over HTTP with its own login and consent forms, a cookie jar for each side.
 */
const CONSOLE = "http://console.test";

let db: TestDatabase;
let provider: TestProvider;

beforeAll(async () => {
  db = await createTestDatabase();
  provider = await startTestProvider({ consoleUrl: CONSOLE });
  Object.assign(process.env, {
    DATABASE_URL: db.url,
    ONCEBOARD_SECRET: "s".repeat(40),
    ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE: "1000000",
    ONCEBOARD_RATE_LIMIT_PER_MINUTE: "1000000",
    ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
    PUBLIC_URL: CONSOLE,
    OIDC_ISSUER: provider.issuer,
    OIDC_CLIENT_ID: TEST_CLIENT_ID,
    OIDC_CLIENT_SECRET: TEST_CLIENT_SECRET,
    OIDC_NAME: "Test IdP",
  });
});
afterAll(async () => {
  await provider?.close();
  await getPrisma().$disconnect();
  await db?.drop();
});

/** Cookies of one site, by name, with their paths. */
class CookieJar {
  readonly #cookies = new Map<string, { value: string; path: string }>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const path =
        attributes
          .map((a) => a.trim())
          .find((a) => /^path=/i.test(a))
          ?.slice(5) ?? "/";
      const expired = attributes.some((a) => /^max-age=0$/i.test(a.trim()) || /^expires=Thu, 01 Jan 1970/i.test(a.trim()));
      if (expired || value === "") this.#cookies.delete(name);
      else this.#cookies.set(name, { value, path });
    }
  }
  header(url: URL): string {
    return [...this.#cookies]
      .filter(([, c]) => url.pathname.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join("; ");
  }
  get(name: string): string | undefined {
    return this.#cookies.get(name)?.value;
  }
}

function consoleRequest(url: string | URL, cookie: string, method = "GET"): Request {
  const headers: Record<string, string> = { host: "console.test", cookie };
  if (method !== "GET") headers.origin = CONSOLE;
  return new Request(new URL(url, CONSOLE), { method, headers });
}

/**
 * Runs the provider's side: follows its redirects and submits its dev login form (as `login`) and
 * consent form, until it sends the browser back to the console. Returns that callback URL.
 */
async function signInAtProvider(authorizationUrl: string, login: string, jar = new CookieJar()): Promise<URL> {
  let url = new URL(authorizationUrl);
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const response = await fetch(url, {
      method: body ? "POST" : "GET",
      headers: { cookie: jar.header(url), ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      body,
      redirect: "manual",
    });
    jar.take(response);
    body = undefined;
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get("location") ?? "", url);
      if (next.origin === CONSOLE) return next;
      url = next;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`provider answered ${response.status}: ${html.slice(0, 300)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`no login or consent form in: ${html.slice(0, 300)}`);
    url = new URL(action.replaceAll("&amp;", "&"), url);
    body = new URLSearchParams(prompt === "login" ? { prompt, login, password: "any" } : { prompt });
  }
  throw new Error("the provider never sent the browser back");
}

/** The console's start: the flow cookie and where it sends the browser. */
async function start(next = "/keys"): Promise<{ flowCookie: string; authorizationUrl: string }> {
  const response = await startRoute.GET(consoleRequest(`/api/auth/oidc/start?next=${encodeURIComponent(next)}`, ""));
  expect(response.status).toBe(302);
  const jar = new CookieJar();
  jar.take(response);
  const flow = jar.get(OIDC_FLOW_COOKIE);
  expect(flow).toBeTruthy();
  return { flowCookie: `${OIDC_FLOW_COOKIE}=${flow}`, authorizationUrl: response.headers.get("location") ?? "" };
}

function callback(url: URL, flowCookie: string): Promise<Response> {
  return callbackRoute.GET(consoleRequest(url, flowCookie));
}

function sessionCookieOf(response: Response): string | null {
  const jar = new CookieJar();
  jar.take(response);
  const value = jar.get(SESSION_COOKIE);
  return value ? `${SESSION_COOKIE}=${value}` : null;
}

async function sessionCount(): Promise<number> {
  const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM console_sessions WHERE signed_in_with = 'oidc'");
  return rows[0].n;
}

async function signInAs(login: string) {
  const { flowCookie, authorizationUrl } = await start();
  const back = await signInAtProvider(authorizationUrl, login);
  const response = await callback(back, flowCookie);
  return { response, cookie: sessionCookieOf(response), back, flowCookie };
}

describe("single sign-on through a real OpenID Provider", () => {
  it("asks for the code flow with PKCE (S256), state and nonce, at the discovered endpoint", async () => {
    const { authorizationUrl, flowCookie } = await start();
    const url = new URL(authorizationUrl);
    expect(url.origin + url.pathname).toBe(`${provider.issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: "code",
      client_id: TEST_CLIENT_ID,
      redirect_uri: `${CONSOLE}/api/auth/oidc/callback`,
      code_challenge_method: "S256",
    });
    for (const name of ["state", "nonce", "code_challenge"]) expect(url.searchParams.get(name)?.length).toBeGreaterThan(20);
    // The flow cookie is SameSite=Lax (the provider's redirect back carries it), httpOnly, for the OIDC routes only.
    const response = await startRoute.GET(consoleRequest("/api/auth/oidc/start", ""));
    expect(response.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Lax; Max-Age=600/);
    expect(response.headers.get("set-cookie")).toMatch(/Path=\/api\/auth\/oidc;/);
    expect(flowCookie).not.toContain(url.searchParams.get("state"));
  });

  it("signs a platform admin in: a server-side session with no token, the role and scope of the groups, audited", async () => {
    const before = await sessionCount();
    const { response, cookie } = await signInAs("platform-admin");
    expect(response.status).toBe(200);
    // A page of the console's own moves on to `next`: a redirect would keep the cross-site
    // navigation's context, and the SameSite=Strict session cookie would not be sent.
    expect(await response.text()).toContain('content="0;url=/keys"');
    expect(response.headers.get("set-cookie")).toMatch(/onceboard_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
    expect(response.headers.get("set-cookie")).toMatch(/onceboard_oidc_flow=; Path=\/api\/auth\/oidc;.*Max-Age=0/);
    expect(cookie).toBeTruthy();
    const auth = await authenticate(new Headers({ cookie: cookie ?? "" }));
    expect(auth?.principal).toEqual({
      tokenId: null,
      oidcSubject: "platform-admin",
      actor: "Pat Platform <pat@example.com> (oidc:platform-admin)",
      tenantId: null,
      role: "admin",
    });
    expect(await sessionCount()).toBe(before + 1);
    const { rows } = await db.pool.query(
      "SELECT actor, result, token_id FROM audit_log WHERE action = 'login.oidc' ORDER BY id DESC LIMIT 1",
    );
    expect(rows[0]).toEqual({ actor: "Pat Platform <pat@example.com> (oidc:platform-admin)", result: "ok", token_id: null });
  });

  it("refuses a callback whose state is not the one this browser started with", async () => {
    const first = await start();
    const second = await start();
    const back = await signInAtProvider(first.authorizationUrl, "platform-admin");
    const before = await sessionCount();
    const response = await callback(back, second.flowCookie);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/login?reason=sso-refused");
    expect(sessionCookieOf(response)).toBeNull();
    expect(await sessionCount()).toBe(before);
    // A forged state in the URL, with the right cookie, is refused too.
    const tampered = new URL(back);
    tampered.searchParams.set("state", "forged");
    expect((await callback(tampered, first.flowCookie)).headers.get("location")).toBe("/login?reason=sso-refused");
    // And no flow cookie at all.
    expect((await callback(back, "")).headers.get("location")).toBe("/login?reason=sso-refused");
    const { rows } = await db.pool.query(
      "SELECT detail->>'reason' AS reason FROM audit_log WHERE action = 'login.oidc' AND result = 'refused' ORDER BY id DESC LIMIT 3",
    );
    expect(rows.map((r) => r.reason).join("\n")).toMatch(/state/);
  });

  it("refuses a replayed code: the second exchange of the same callback opens no session", async () => {
    const { response, back, flowCookie } = await signInAs("acme-viewer");
    expect(response.status).toBe(200);
    const before = await sessionCount();
    const replay = await callback(back, flowCookie);
    expect(replay.status).toBe(303);
    expect(replay.headers.get("location")).toBe("/login?reason=sso-refused");
    expect(sessionCookieOf(replay)).toBeNull();
    expect(await sessionCount()).toBe(before);
    const { rows } = await db.pool.query(
      "SELECT detail->>'reason' AS reason FROM audit_log WHERE action = 'login.oidc' ORDER BY id DESC LIMIT 1",
    );
    expect(rows[0].reason).toMatch(/invalid_grant/);
  });

  it("refuses an expired ID token (the console's clock past its exp and the tolerance)", async () => {
    provider.setIdTokenTtl(60);
    try {
      const { flowCookie, authorizationUrl } = await start();
      const back = await signInAtProvider(authorizationUrl, "platform-admin");
      const settings = oidcSettings();
      if (!settings) throw new Error("OIDC is not configured");
      const before = await sessionCount();
      // Two minutes ahead: past the token's 60 s and openid-client's 30 s tolerance, within the flow's 10 min.
      const result = await completeOidcSignIn(
        settings,
        { search: back.search, cookieHeader: flowCookie, ip: null },
        getPrisma(),
        new Date(Date.now() + 120_000),
      );
      expect(result.kind).toBe("refused");
      expect(result.kind === "refused" && result.reason).toMatch(/JWT timestamp claim value failed validation/);
      expect(await sessionCount()).toBe(before);
    } finally {
      provider.setIdTokenTtl(3600);
    }
  });

  it("ends the session no later than the ID token does", async () => {
    provider.setIdTokenTtl(600);
    try {
      const { cookie } = await signInAs("platform-admin");
      const at = (ms: number) => authenticate(new Headers({ cookie: cookie ?? "" }), getPrisma(), new Date(Date.now() + ms));
      expect((await at(0))?.principal.role).toBe("admin");
      expect(await at(601_000)).toBeNull();
    } finally {
      provider.setIdTokenTtl(3600);
    }
  });

  it("gives a person without a mapped group the no-access page and no session", async () => {
    const before = await sessionCount();
    const { response, cookie } = await signInAs("nobody");
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/no-access?reason=no-role");
    expect(cookie).toBeNull();
    expect(await sessionCount()).toBe(before);
    const { rows } = await db.pool.query(
      "SELECT actor, result, detail FROM audit_log WHERE action = 'login.oidc' ORDER BY id DESC LIMIT 1",
    );
    expect(rows[0]).toMatchObject({
      actor: "anonymous",
      result: "refused",
      detail: { subject: "nobody", groups: ["staff", "marketing"] },
    });
  });

  it("refuses groups for two tenants, clearly, with no session", async () => {
    const before = await sessionCount();
    const { response, cookie } = await signInAs("two-tenants");
    expect(response.headers.get("location")).toBe("/no-access?reason=two-scopes");
    expect(cookie).toBeNull();
    expect(await sessionCount()).toBe(before);
  });

  it("a tenant group's session reads only its tenant, whatever tenant it asks for", async () => {
    const now = new Date();
    for (const tenant of ["acme", "globex"]) {
      await db.pool.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, first_message_id, last_message_id,
                              created_at, updated_at, completed_at, duplicate_count)
         VALUES ($1, 'capture:ord-oidc-1', 'capture', 'completed', 'external', 1, $2, $2, $3, $3, $3, 0)`,
        [tenant, `msg-${tenant}`, now],
      );
    }
    const { cookie } = await signInAs("acme-operator");
    const auth = await authenticate(new Headers({ cookie: cookie ?? "" }));
    expect(auth?.principal).toMatchObject({ tenantId: "acme", role: "operator" });
    for (const query of ["?q=ord-oidc-1", "?q=ord-oidc-1&tenant=globex"]) {
      const response = await effectsRoute.GET(consoleRequest(`/api/v1/effects${query}`, cookie ?? ""), {
        params: Promise.resolve({}),
      });
      expect(response.status).toBe(200);
      const body = await response.json();
      expect(body.tenant).toBe("acme");
      expect(body.effects.map((e: { key: string }) => e.key)).toEqual(["capture:ord-oidc-1"]);
      expect(JSON.stringify(body)).not.toContain("globex");
    }
  });

  it("sign-out ends the session and sends the browser to the provider's end_session with the ID token hint", async () => {
    const { cookie } = await signInAs("platform-admin");
    const out = await logoutRoute.POST(consoleRequest("/api/auth/logout", cookie ?? "", "POST"));
    expect(out.status).toBe(303);
    const location = new URL(out.headers.get("location") ?? "");
    expect(location.origin + location.pathname).toBe(`${provider.issuer}/session/end`);
    expect(location.searchParams.get("post_logout_redirect_uri")).toBe(`${CONSOLE}/login`);
    expect(location.searchParams.get("id_token_hint")?.split(".")).toHaveLength(3);
    expect(out.headers.get("set-cookie")).toMatch(/onceboard_session=;.*Max-Age=0/);
    expect(await authenticate(new Headers({ cookie: cookie ?? "" }))).toBeNull();
    // The provider accepts the request: its own sign-out confirmation, not an error.
    const endSession = await fetch(location, { redirect: "manual" });
    expect(endSession.status).toBe(200);
    expect(await endSession.text()).toContain(`${provider.issuer}/session/end/confirm`);
  });

  it("a token's sign-out still goes to /login", async () => {
    const { createToken } = await import("./tokens");
    const { login } = await import("./login");
    const { secret } = await createToken({ name: "oidc-test", tenantId: "acme", role: "viewer" });
    const result = await login({ token: secret, ip: null });
    const out = await logoutRoute.POST(consoleRequest("/api/auth/logout", `${SESSION_COOKIE}=${result?.cookieValue}`, "POST"));
    expect(out.headers.get("location")).toBe("/login");
  });
});
