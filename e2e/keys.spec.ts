import { expect, test } from "@playwright/test";
import { KEYS_SEED } from "../lib/features/keys-and-effects/testing/seed-keys";
import { bearer, loginAs } from "./auth";
import { SCREENSHOT_DIR } from "./env";

test.use({ colorScheme: "light" });
// A shared, loaded machine: generous timeouts (tests never assert a duration).
test.describe.configure({ timeout: 90_000 });

test("a key taken over after its worker died shows its deliveries newest last, the first and the takeover marked", async ({
  page,
}) => {
  await loginAs(page, "viewer");
  await page.goto(`/keys?q=ord-e2e-takeover&key=${encodeURIComponent(KEYS_SEED.takeoverKey)}`);
  const deliveries = page.getByTestId("key-detail").getByTestId("timeline-entry");
  await expect(deliveries).toHaveCount(3);
  await expect(deliveries.first().getByTestId("timeline-mark")).toHaveText("first delivery");
  await expect(deliveries.first()).toContainText("worker-dead");
  await expect(deliveries.first().getByTestId("timeline-gap")).toHaveCount(0);
  await expect(deliveries.nth(1).getByTestId("timeline-mark")).toHaveText("takeover");
  await expect(deliveries.nth(1)).toContainText("took over an expired lease");
  await expect(deliveries.nth(1)).toContainText("attempt 2");
  await expect(deliveries.nth(1).getByTestId("timeline-gap")).toHaveText("+45 s");
  await expect(deliveries.last()).toContainText("duplicate");
  await expect(deliveries.last().getByTestId("timeline-gap")).toHaveText("+1 min");
});

test("an operator finds an order by its id fragment, reads the verdict, and releases a stuck claim", async ({ page }) => {
  await loginAs(page, "operator");
  await page.goto("/keys");
  await page.getByRole("searchbox", { name: "Key or fragment" }).fill(KEYS_SEED.orderId.slice(4));
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/\/keys\?q=e2e-4711/);
  await expect(page.getByRole("main").getByRole("alert")).toHaveCount(0);
  const rows = page.getByTestId("key-row");
  await expect(rows).toHaveCount(3);
  await expect(page.getByRole("table")).toContainText(`capture:${KEYS_SEED.orderId}`);
  await expect(page.getByRole("table")).toContainText(`receipt:${KEYS_SEED.orderId}`);
  await expect(rows.first().getByTestId("status-badge")).toHaveText("completed");

  await page.getByRole("link", { name: `capture:${KEYS_SEED.orderId}` }).click();
  const detail = page.getByTestId("key-detail");
  await expect(detail.getByTestId("verdict")).toHaveText("ran once, 3 duplicates suppressed, last 49 s after the first");
  await expect(detail.getByTestId("steps").getByRole("link")).toHaveCount(3);
  // Every delivery, newest last: the first marked, the waiting copy, the gaps written out.
  const deliveries = detail.getByTestId("timeline-entry");
  await expect(deliveries).toHaveCount(4);
  await expect(deliveries.first()).toContainText("first delivery");
  await expect(deliveries.nth(1)).toContainText("waited while in flight");
  await expect(deliveries.nth(1).getByTestId("timeline-gap")).toHaveText("+0.5 s");
  await expect(deliveries.nth(3).getByTestId("timeline-gap")).toHaveText("+19 s");
  await expect(deliveries.last()).toContainText("delivery 3");
  await expect(detail.getByTestId("timeline")).not.toContainText("globex");
  const outcome = detail.getByTestId("outcome");
  await expect(outcome).toContainText("[card …1111]");
  await expect(outcome).toContainText("[email]");
  await expect(outcome).toContainText("[redacted]");
  await expect(outcome).not.toContainText(KEYS_SEED.email);
  await expect(outcome).not.toContainText("555 0100");
  await expect(outcome).not.toContainText("GLOBEX");
  // The capture step had no violation: its job's mark-paid did, and only that key lists it.
  await expect(detail.getByTestId("key-violation")).toHaveCount(0);
  await expect(detail).not.toContainText("globex_only_key");
  await page.screenshot({ path: `${SCREENSHOT_DIR}/keys-detail.png`, fullPage: true });

  // The detail's URL is a shareable deep link.
  const deepLink = page.url();
  expect(deepLink).toContain(`key=${encodeURIComponent(`capture:${KEYS_SEED.orderId}`)}`);
  await page.goto(deepLink);
  await expect(page.getByTestId("verdict")).toHaveText("ran once, 3 duplicates suppressed, last 49 s after the first");

  // Release the stuck claim, behind a confirmation.
  await page.goto(`/keys?q=ord-e2e-stuck&key=${encodeURIComponent(KEYS_SEED.stuckKey)}`);
  await expect(page.getByTestId("key-detail").getByTestId("status-badge").first()).toHaveText("stuck");
  await page.getByRole("button", { name: "Release claim…" }).click();
  await page.screenshot({ path: `${SCREENSHOT_DIR}/keys-release-confirm.png`, fullPage: true });
  await page.getByRole("alertdialog", { name: "Confirm release" }).getByRole("button", { name: "Confirm release" }).click();
  // The detail reloads with the claim released: failed, and the error says who released it.
  await expect(page.getByTestId("key-detail").getByTestId("status-badge").first()).toHaveText("failed");
  await expect(page.getByTestId("key-detail")).toContainText("released by e2e operator");
});

test("a deep link's first HTML already holds the results and the key's verdict; the client takes over from there", async ({
  page,
}) => {
  await loginAs(page, "viewer");
  const capture = `capture:${KEYS_SEED.orderId}`;
  const deepLink = `/keys?q=${KEYS_SEED.orderId}&key=${encodeURIComponent(capture)}`;
  // The server's answer itself, before any script runs: rendered rows and the verdict element.
  const first = await page.request.get(deepLink);
  expect(first.status()).toBe(200);
  const html = await first.text();
  expect(html).toMatch(/data-testid="verdict"[^>]*>ran once, 3 duplicates suppressed, last 49 s after the first</);
  expect(html).toMatch(new RegExp(`data-testid="key-row"[^]*?>receipt:${KEYS_SEED.orderId}<`));
  expect(html).not.toContain("Searching…");
  expect(html).not.toContain(KEYS_SEED.email);
  // Read on the server, audited as the API audits it.
  const audit = await page.request.get(`/api/v1/audit?limit=500`, { headers: bearer("admin") });
  const reads = ((await audit.json()).entries as { action: string; target: string }[]).filter(
    (e) => e.action === "effect.read" && e.target === capture,
  );
  expect(reads.length).toBeGreaterThan(0);

  // In the browser the hydrated page keeps working: another step opens from the client.
  await page.goto(deepLink);
  await expect(page.getByTestId("verdict")).toHaveText("ran once, 3 duplicates suppressed, last 49 s after the first");
  await page
    .getByTestId("steps")
    .getByRole("link", { name: new RegExp(`mark-paid:${KEYS_SEED.orderId}`) })
    .click();
  await expect(page).toHaveURL(new RegExp(`key=${encodeURIComponent(`mark-paid:${KEYS_SEED.orderId}`)}`));
  await expect(page.getByTestId("key-detail").getByRole("heading", { level: 2 })).toContainText(`mark-paid:${KEYS_SEED.orderId}`);

  // An invalid value in the URL: the API's 400 text, visible on the page (and in its first HTML).
  const bad = await page.request.get("/keys?status=bogus");
  expect(await bad.text()).toContain("invalid query: status");
  await page.goto(`/keys?q=${KEYS_SEED.orderId}&key=${"k".repeat(300)}`);
  await expect(page.getByRole("main").getByRole("alert")).toContainText("invalid query: key");
});

test("a viewer sees no release button, and the API refuses the viewer", async ({ page, request }) => {
  await loginAs(page, "viewer");
  await page.goto(`/keys?q=stuck&key=${encodeURIComponent(KEYS_SEED.stuckAtMostOnceKey)}`);
  await expect(page.getByTestId("verdict")).toContainText("stuck");
  await expect(page.getByRole("button", { name: /Release/ })).toHaveCount(0);
  await page.screenshot({ path: `${SCREENSHOT_DIR}/keys-viewer.png`, fullPage: true });
  const refused = await request.post(`/api/v1/effects/${encodeURIComponent(KEYS_SEED.stuckAtMostOnceKey)}/release`, {
    headers: bearer("viewer"),
  });
  expect(refused.status()).toBe(403);
  expect((await refused.json()).error.code).toBe("FORBIDDEN");
});

test("a platform admin searches every tenant at once, each row naming its tenant, and opens one in its tenant", async ({
  page,
}) => {
  await loginAs(page, "platform-admin");
  await page.goto("/keys");
  await expect(page.getByRole("heading", { name: "Pick a tenant" })).toHaveCount(0);
  await page.getByRole("searchbox", { name: "Key or fragment" }).fill("capture-payment:in_progress:");
  await page.getByRole("button", { name: "Search" }).click();
  // The previous list stays up while the search loads (keepPreviousData): wait for the search's own rows.
  await expect
    .poll(async () => {
      const keys = await page.getByTestId("key-row").allTextContents();
      return keys.length > 0 && keys.every((text) => text.includes("capture-payment:in_progress:"));
    })
    .toBe(true);
  const tenants = new Set(await page.getByTestId("key-tenant").allTextContents());
  expect(tenants.size).toBeGreaterThan(1);
  await expect(page.getByRole("main")).toContainText("every tenant, last 7 days");
  // Opening a row names its tenant: the detail is that tenant's key.
  const row = page.getByTestId("key-row").first();
  const tenant = (await row.getByTestId("key-tenant").textContent()) ?? "";
  await row.getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`tenant=${tenant}&`));
  await expect(page.getByTestId("key-detail")).toBeVisible();
  // Narrowed to one tenant, the tenant column goes: every row is that tenant's.
  await page.goto(`/keys?tenant=globex&q=${KEYS_SEED.orderId}&jobType=capture-payment`);
  await expect(page.getByTestId("key-row")).toHaveCount(1);
  await expect(page.getByTestId("key-tenant")).toHaveCount(0);
});

test("a tenant session searches only its own tenant, whatever the URL names", async ({ page }) => {
  await loginAs(page, "viewer");
  await page.goto(`/keys?tenant=globex&q=${KEYS_SEED.orderId}`);
  await expect(page.getByTestId("key-row")).toHaveCount(3);
  await expect(page.getByTestId("key-tenant")).toHaveCount(0);
  await expect(page.getByRole("main")).toContainText("Tenant acme");
});

test("a bad search shows its error beside the form, which keeps what was typed", async ({ page }) => {
  await loginAs(page, "viewer");
  // The URL is wrong, so the page answers 400 (not a 200 with an error in it), with its sidebar and form.
  const response = await page.goto(`/keys?q=${"x".repeat(300)}&status=bogus`);
  expect(response?.status()).toBe(400);
  await expect(page.getByRole("link", { name: "Overview" })).toBeVisible();
  const form = page.getByRole("search", { name: "Search keys" });
  await expect(form).toBeVisible();
  await expect(form.getByRole("searchbox", { name: "Key or fragment" })).toHaveValue("x".repeat(300));
  await expect(page.getByTestId("invalid-query").getByRole("alert")).toContainText("invalid query");
  // Fixing it in the form searches again, in place.
  await form.getByRole("searchbox", { name: "Key or fragment" }).fill(KEYS_SEED.orderId);
  await form.getByRole("combobox", { name: "Status" }).selectOption("");
  await form.getByRole("button", { name: "Search" }).click();
  await expect(page.getByTestId("key-row").first()).toBeVisible();
  await expect(page.getByTestId("invalid-query")).toHaveCount(0);
});

test("a stuck claim is called stuck in the list as in its detail", async ({ page }) => {
  // Not KEYS_SEED.stuckKey: the first test releases that one.
  await loginAs(page, "viewer");
  await page.goto(`/keys?q=stuck&key=${encodeURIComponent(KEYS_SEED.stuckAtMostOnceKey)}`);
  const row = page.getByTestId("key-row").filter({ hasText: KEYS_SEED.stuckAtMostOnceKey });
  await expect(row.getByTestId("status-badge")).toHaveText("stuck");
  await expect(page.getByTestId("key-detail").getByTestId("status-badge").first()).toHaveText("stuck");
});

test("keys with / % ? # spaces and non-ASCII round-trip through the URL", async ({ request }) => {
  for (const key of KEYS_SEED.oddKeys) {
    const response = await request.get(`/api/v1/effects/${encodeURIComponent(key)}`, { headers: bearer("viewer") });
    expect(response.status(), key).toBe(200);
    expect((await response.json()).key).toBe(key);
  }
  const unknown = await request.get("/api/v1/effects/a/b/c", { headers: bearer("viewer") });
  expect(unknown.status()).toBe(404);
  expect((await unknown.json()).error.code).toBe("NOT_FOUND");
});
