import { expect, test } from "@playwright/test";
import { bearer, loginAs } from "./auth";
import { BASE_URL } from "./env";

// The Retention page against the seeded console: partitions and the plan for platform tokens, the
// settings and a note for a tenant's (partitions hold every tenant's effects), the apply button
// (behind a confirmation) only for a platform admin, and the API refusing the rest.
// A maintenance run can take seconds on a loaded machine.
test.setTimeout(120_000);

test("a tenant viewer sees the settings and why partitions are not shown; the API refuses the plan and apply", async ({
  page,
  request,
}) => {
  await loginAs(page, "viewer");
  await page.goto("/retention");
  await expect(page.getByRole("heading", { name: "Retention", level: 1 })).toBeVisible();
  await expect(page.getByTestId("retention-days")).toBeVisible();
  await expect(page.getByTestId("retention-platform-only")).toContainText("shown to platform tokens only");
  await expect(page.getByTestId("partitions")).toHaveCount(0);
  await expect(page.getByRole("button", { name: /Apply plan/ })).toHaveCount(0);

  const refused = await request.post(`${BASE_URL}/api/v1/retention/apply`, {
    headers: { ...bearer("viewer"), origin: BASE_URL },
  });
  expect(refused.status()).toBe(403);
  const plan = await request.get(`${BASE_URL}/api/v1/retention/plan`, { headers: bearer("viewer") });
  expect(plan.status()).toBe(403);
  const platformPlan = await request.get(`${BASE_URL}/api/v1/retention/plan`, { headers: bearer("platform-admin") });
  expect(platformPlan.status()).toBe(200);
  expect((await platformPlan.json()).partitions.length).toBeGreaterThan(3);
});

test("the first HTML already holds the partitions (server-rendered, then polled), and ?runs= is read on the server", async ({
  page,
}) => {
  await loginAs(page, "platform-admin");
  // The document as the server sends it, before any script runs: the rows are in it.
  const first = await page.request.get(`${BASE_URL}/retention`);
  expect(first.status()).toBe(200);
  const html = await first.text();
  expect(html).toContain('data-testid="partitions"');
  expect(html.match(/<tr data-partition="[a-z0-9_]+"/g)?.length ?? 0).toBeGreaterThan(3);
  expect(html).toMatch(/data-testid="run-counts"[\s\S]*?<strong aria-current="true">20<\/strong>/);

  // The runs count from the address, on the server too; an invalid one is the API's 400, shown.
  const five = await (await page.request.get(`${BASE_URL}/retention?runs=5`)).text();
  expect(five).toMatch(/data-testid="run-counts"[\s\S]*?<strong aria-current="true">5<\/strong>/);
  const bad = await (await page.request.get(`${BASE_URL}/retention?runs=banana`)).text();
  expect(bad).toContain("This link has an invalid filter");
  expect(bad).toContain('data-testid="run-counts"');
  expect(bad).toContain("invalid query: runs");
  const api = await page.request.get(`${BASE_URL}/api/v1/retention?runs=banana`);
  expect(api.status()).toBe(400);
  expect((await api.json()).error.message).toContain("invalid query: runs");

  // Hydrated: the client polls the same view (same query string) and keeps the rows.
  const polled = page.waitForResponse((r) => r.url().includes("/api/v1/retention?runs=5") && r.status() === 200, {
    timeout: 60_000,
  });
  await page.goto("/retention?runs=5");
  await expect(page.getByTestId("partitions").locator("tbody tr").first()).toBeVisible();
  await polled;
  await expect(page.getByTestId("partitions").locator("tbody tr").first()).toBeVisible();
});

test("a platform admin applies the plan after confirming, and the partition list changes", async ({ page, request }) => {
  // More partitions ahead than exist: the plan now has partitions to create.
  const headers = { ...bearer("platform-admin"), origin: BASE_URL, "content-type": "application/json" };
  // Settle what the seeded history already owes (partitions past the retention) first, so the
  // list below changes by what this test asks for only.
  const settled = await request.post(`${BASE_URL}/api/v1/retention/apply`, { headers });
  expect(settled.status(), await settled.text()).toBe(200);
  const before = await (await request.get(`${BASE_URL}/api/v1/retention/settings`, { headers })).json();
  const raised = await request.put(`${BASE_URL}/api/v1/retention/settings`, {
    headers,
    data: { premakeCount: before.premakeCount + 3 },
  });
  expect(raised.status(), await raised.text()).toBe(200);

  await loginAs(page, "platform-admin");
  await page.goto("/retention");
  const rows = page.getByTestId("partitions").locator("tbody tr");
  await expect(rows.first()).toBeVisible();
  const countBefore = await rows.count();
  await expect(page.getByTestId("plan")).toContainText("create");

  await page.getByRole("button", { name: "Apply plan…" }).click();
  await page.getByRole("button", { name: "Confirm apply" }).click();
  await expect(page.getByTestId("apply-result")).toContainText("success");
  await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(countBefore + 3);
  await expect(page.getByTestId("plan-empty")).toBeVisible();
  // Nothing left to do: nothing to apply or confirm.
  await expect(page.getByRole("button", { name: /Apply plan|Confirm apply/ })).toHaveCount(0);
  await expect(page.getByTestId("runs")).toContainText("api");

  // An operator of a tenant cannot apply either: retention is platform-wide.
  const tenantAdmin = await request.post(`${BASE_URL}/api/v1/retention/apply`, {
    headers: { ...bearer("admin"), origin: BASE_URL },
  });
  expect(tenantAdmin.status()).toBe(403);
  await request.put(`${BASE_URL}/api/v1/retention/settings`, { headers, data: { premakeCount: before.premakeCount } });
});
