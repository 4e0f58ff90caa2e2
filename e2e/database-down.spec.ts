import { expect, test } from "@playwright/test";
import { bearer, loginAs } from "./auth";
import { BROKEN_URL, SCREENSHOT_DIR } from "./env";

// A second console server whose DATABASE_URL points at a closed port: a real unreachable database.
test.use({ baseURL: BROKEN_URL, colorScheme: "light" });
// Signed in on the healthy console: the cookie names a session the broken console cannot check.
test.beforeEach(async ({ page }) => loginAs(page, "viewer"));

test("a page fails closed when the session cannot be checked: the outage notice, no data", async ({ page }) => {
  await page.goto("/overview");
  await expect(page).toHaveURL(/\/login\?reason=unavailable&next=%2Foverview$/);
  await expect(page.getByRole("main").getByRole("alert")).toContainText("The database cannot be reached");
  await expect(page.getByRole("main")).not.toContainText("Which tenant");
  await page.screenshot({ path: `${SCREENSHOT_DIR}/overview-database-down.png` });

  // The API, with the same session cookie: 503, never data (the Workers panel's route included).
  for (const path of ["/api/v1/workers", "/api/v1/overview"]) {
    const response = await page.request.get(path);
    expect(response.status(), path).toBe(503);
    expect((await response.json()).error.code).toBe("DATABASE_UNAVAILABLE");
  }
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
