import { expect, test } from "@playwright/test";
import { loginAs } from "./auth";

// A created token is a success, not an error, and the form it came from sits inside its panel's padding.
test.use({ colorScheme: "light" });

test("the create-token form has its panel's padding, and a created token is announced in the success tone", async ({ page }) => {
  await loginAs(page, "admin");
  await page.goto("/admin");
  const panel = page.getByTestId("tokens");
  const form = page.getByTestId("create-token");
  await expect(form).toBeVisible();
  const [panelBox, formBox, nameBox] = await Promise.all([
    panel.boundingBox(),
    form.boundingBox(),
    form.getByLabel("Name").boundingBox(),
  ]);
  // The fields start inside the panel, not against its border.
  expect(nameBox!.x - panelBox!.x).toBeGreaterThanOrEqual(12);
  expect(formBox!.y - panelBox!.y).toBeGreaterThan(0);

  await form.getByLabel("Name").fill(`e2e-tone-${Date.now()}`);
  await form.getByRole("button", { name: "Create token" }).click();
  const notice = page.getByTestId("created-secret");
  await expect(notice).toBeVisible();
  const colours = await page.evaluate(() => {
    const el = document.querySelector('[data-testid="created-secret"]') as HTMLElement;
    const probe = (variable: string) => {
      const p = document.createElement("div");
      p.style.background = `var(${variable})`;
      document.body.append(p);
      const colour = getComputedStyle(p).backgroundColor;
      p.remove();
      return colour;
    };
    return { notice: getComputedStyle(el).backgroundColor, success: probe("--success-soft"), danger: probe("--danger-soft") };
  });
  expect(colours.notice).toBe(colours.success);
  expect(colours.notice).not.toBe(colours.danger);
  const noticeBox = await notice.boundingBox();
  expect(noticeBox!.x - panelBox!.x).toBeGreaterThanOrEqual(12);
});
