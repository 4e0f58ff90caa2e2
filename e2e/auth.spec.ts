import { expect, test } from "@playwright/test";
import { bearer, tokenFor, viewerLoginCode } from "./auth";
import { SCREENSHOT_DIR } from "./env";

test.use({ colorScheme: "light" });
// Each test signs in several times through the real form: on a loaded machine that outlasts the
// default minute (tests never assert a duration).
test.describe.configure({ timeout: 180_000 });

test("a signed-out page goes to the login page, and the form signs in and back", async ({ page, request }) => {
  await page.goto("/overview?window=7d");
  await expect(page).toHaveURL(/\/login\?next=%2Foverview%3Fwindow%3D7d$/);
  await expect(page.getByRole("heading", { level: 1, name: "Sign in" })).toBeVisible();

  await page.getByLabel("Token").fill("ob_not-a-real-token");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toContainText("Sign-in refused");

  await page.getByLabel("Token").fill(tokenFor("operator"));
  await page.screenshot({ path: `${SCREENSHOT_DIR}/login.png` });
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/overview\?window=7d$/);
  const badge = page.getByTestId("session-badge");
  await expect(badge).toContainText("operator · acme");

  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === "onceboard_session");
  expect(session?.httpOnly).toBe(true);
  expect(session?.sameSite).toBe("Strict");

  const cookie = `onceboard_session=${session?.value}`;
  expect((await request.get("/api/v1/overview", { headers: { cookie } })).status()).toBe(200);

  await badge.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/overview");
  await expect(page).toHaveURL(/\/login/);
  // Signing out ended the session on the server: the old cookie, replayed, is refused.
  expect((await request.get("/api/v1/overview", { headers: { cookie } })).status()).toBe(401);
});

test("a login link signs in when opened, and when pasted into a tab already on /login", async ({ page }) => {
  await page.goto(`/login?next=${encodeURIComponent("/keys")}#code=${viewerLoginCode(0)}`);
  // A loaded machine: the exchange and the redirect may take a while (tests never assert a duration).
  await expect(page).toHaveURL(/\/keys$/, { timeout: 45_000 });
  await expect(page.getByTestId("session-badge")).toContainText("viewer · acme");

  await page.context().clearCookies();
  await page.goto("/login");
  await expect(page.getByRole("heading", { level: 1, name: "Sign in" })).toBeVisible();
  // Pasting the link changes only the fragment: no navigation, so the page must read it itself.
  await page.evaluate((code) => {
    window.location.hash = `code=${code}`;
  }, viewerLoginCode(1));
  await expect(page).toHaveURL(/\/overview$/, { timeout: 45_000 });
  await expect(page.getByTestId("session-badge")).toContainText("viewer · acme");
});

test("sign-in never sends the reader off the console, however next= is spelled", async ({ page }) => {
  for (const next of ["/%5Cevil.example", "//evil.example", "/%2F%2Fevil.example"]) {
    await page.context().clearCookies();
    await page.goto(`/login?next=${encodeURIComponent(next)}`);
    await page.getByLabel("Token").fill(tokenFor("viewer"));
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page, next).toHaveURL(/\/overview$/);
  }
});

test("the API answers 401 JSON without credentials and serves a Bearer token", async ({ request }) => {
  for (const path of ["/api/v1/overview", "/api/v1/workers", "/api/v1/no-such-endpoint"]) {
    const response = await request.get(path);
    expect(response.status(), path).toBe(401);
    expect((await response.json()).error.code).toBe("UNAUTHENTICATED");
  }
  expect((await request.get("/api/v1/overview", { headers: bearer("viewer") })).status()).toBe(200);
  const missing = await request.get("/api/v1/no-such-endpoint", { headers: bearer("viewer") });
  expect(missing.status()).toBe(404);
  expect((await missing.json()).error.code).toBe("NOT_FOUND");
  const wrongMethod = await request.delete("/api/v1/overview", { headers: bearer("viewer") });
  expect(wrongMethod.status()).toBe(405);
  expect((await wrongMethod.json()).error.code).toBe("METHOD_NOT_ALLOWED");
  // Health stays public: `npm start` and load balancers poll it before anyone signs in.
  expect((await request.get("/api/v1/health")).status()).toBe(200);
});

test("a malformed percent-escape in an API path is a JSON 400 after authentication, never a 500", async ({ request }) => {
  for (const path of [
    "/api/v1/effects/%ZZ",
    "/api/v1/effects/%E0%A4%A",
    "/api/v1/effects/%FF",
    "/api/v1/effects/capture%3Aord-%ZZ/release",
    "/api/v1/%ZZ",
  ]) {
    expect((await request.get(path)).status(), path).toBe(401);
    const response = await request.get(path, { headers: bearer("viewer") });
    expect(response.status(), path).toBe(400);
    expect((await response.json()).error.code, path).toBe("INVALID_INPUT");
    const post = await request.post(path, { headers: bearer("operator") });
    expect(post.status(), path).toBe(400);
  }
  // A well-encoded key with "%" in it still reaches the handler (404: no such key).
  const missing = await request.get(`/api/v1/effects/${encodeURIComponent("capture:100%-off")}`, { headers: bearer("viewer") });
  expect(missing.status()).toBe(404);
});

test("pages carry the security headers and a CSP whose nonce is on every script", async ({ page }) => {
  const response = await page.goto("/login");
  const headers = response!.headers();
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("same-origin");
  expect(headers["x-frame-options"]).toBe("DENY");
  const csp = headers["content-security-policy"] ?? "";
  expect(csp).toContain("frame-ancestors 'none'");
  const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
  expect(nonce).toBeTruthy();
  expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
  const scripts = await page.locator("script").evaluateAll((nodes) => nodes.map((n) => (n as HTMLScriptElement).nonce));
  expect(scripts.length).toBeGreaterThan(0);
  for (const value of scripts) expect(value).toBe(nonce);
});
