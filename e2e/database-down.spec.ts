import { expect, test } from "@playwright/test";
import { bearer, loginAs } from "./auth";
import { BROKEN_URL, SCREENSHOT_DIR } from "./env";

// A second console server whose DATABASE_URL points at a closed port: a real unreachable database.
test.use({ baseURL: BROKEN_URL, colorScheme: "light" });
// Signed in on the healthy console: the session stays valid while this one's database is down.
test.beforeEach(async ({ page }) => loginAs(page, "viewer"));

test("the Overview shows a clear error state when the database cannot be reached", async ({ page }) => {
  await page.goto("/overview");
  const alert = page.getByRole("main").getByRole("alert");
  await expect(alert).toContainText("The database cannot be reached");
  await expect(alert).toContainText("cannot reach PostgreSQL (connection refused)");
  await expect(alert).toContainText("DATABASE_UNAVAILABLE");
  await expect(page.getByRole("status").filter({ hasText: "Database unreachable" })).toBeVisible();

  // Retrying asks again and still reports the outage (the page does not crash).
  const retried = page.waitForResponse((r) => r.url().includes("/api/v1/overview") && r.status() === 503);
  await alert.getByRole("button", { name: "Retry" }).click();
  await retried;
  await expect(page.getByRole("main").getByRole("alert")).toContainText("The database cannot be reached");
  await page.screenshot({ path: `${SCREENSHOT_DIR}/overview-database-down.png` });
});

test("the API answers 503 with a message and no stack trace", async ({ request }) => {
  for (const path of ["/api/v1/health", "/api/v1/overview"]) {
    const response = await request.get(path, { headers: bearer("viewer") });
    expect(response.status(), path).toBe(503);
    expect(response.headers()["content-type"]).toContain("application/json");
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: "DATABASE_UNAVAILABLE", message: "cannot reach PostgreSQL (connection refused)" },
    });
    expect(text).not.toMatch(/\n\s+at |stack|unused/);
  }
});
