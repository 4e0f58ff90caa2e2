import { expect, test } from "@playwright/test";

/**
 * The files a browser, a phone's home screen or a crawler asks for before anyone signs in: each
 * answers 200 with its content type without a session, and robots.txt plus every page's
 * <meta name="robots"> keep the admin console out of search engines.
 */
const PUBLIC_FILES: ReadonlyArray<readonly [path: string, contentType: RegExp]> = [
  ["/favicon.ico", /^image\/(x-icon|vnd\.microsoft\.icon)/],
  ["/icon.svg", /^image\/svg\+xml/],
  ["/apple-touch-icon.png", /^image\/png/],
  ["/icon-192.png", /^image\/png/],
  ["/icon-512.png", /^image\/png/],
  ["/manifest.webmanifest", /^application\/manifest\+json/],
  ["/robots.txt", /^text\/plain/],
];

test.use({ storageState: { cookies: [], origins: [] } });

for (const [path, contentType] of PUBLIC_FILES) {
  test(`${path} answers without a session`, async ({ request }) => {
    const response = await request.get(path, { maxRedirects: 0 });
    expect(response.status()).toBe(200);
    expect(response.headers()["content-type"]).toMatch(contentType);
    expect((await response.body()).length).toBeGreaterThan(0);
  });
}

test("favicon.ico holds the mark at 16, 32 and 48 px", async ({ request }) => {
  const ico = await request.get("/favicon.ico").then((r) => r.body());
  expect(ico.readUInt16LE(2)).toBe(1); // an icon, not a cursor
  const count = ico.readUInt16LE(4);
  const sizes = Array.from({ length: count }, (_, i) => ico.readUInt8(6 + 16 * i));
  expect(sizes).toEqual([16, 32, 48]);
});

test("the manifest names the console and its icons, which all load", async ({ request }) => {
  const manifest = await request.get("/manifest.webmanifest").then((r) => r.json());
  expect(manifest.name).toBe("Onceboard");
  expect(manifest.icons.map((icon: { sizes: string }) => icon.sizes)).toEqual(expect.arrayContaining(["192x192", "512x512"]));
  for (const icon of manifest.icons as { src: string }[]) expect((await request.get(icon.src)).status(), icon.src).toBe(200);
});

test("search engines are kept out: robots.txt disallows everything and pages say noindex", async ({ request, page }) => {
  const robots = await request.get("/robots.txt").then((r) => r.text());
  expect(robots).toMatch(/^User-agent: \*$/m);
  expect(robots).toMatch(/^Disallow: \/$/m);
  await page.goto("/login");
  await expect(page.locator('meta[name="robots"]')).toHaveAttribute("content", /noindex/);
  await expect(page.locator('link[rel="manifest"]')).toHaveAttribute("href", "/manifest.webmanifest");
  await expect(page.locator('link[rel="apple-touch-icon"]')).toHaveAttribute("href", "/apple-touch-icon.png");
});
