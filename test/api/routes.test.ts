import fs from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OPENAPI } from "../../lib/routes/openapi";

const ROOT = path.resolve(import.meta.dirname, "../..");
const API_DIR = path.join(ROOT, "app/api/v1");
/** Answer before anyone can sign in (npm start and load balancers poll health), or route nothing. */
const PUBLIC_ROUTES = new Set(["/api/v1/health", "/api/v1/[...path]"]);

async function routeFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory()
        ? routeFiles(path.join(dir, e.name))
        : Promise.resolve(e.name === "route.ts" ? [path.join(dir, e.name)] : []),
    ),
  );
  return nested.flat();
}

const apiPath = (file: string) =>
  `/api/v1/${path.relative(API_DIR, path.dirname(file)).split(path.sep).join("/")}`.replace(/\[(\w+)\]/g, "{$1}");

describe("every /api/v1 route", () => {
  it("goes through withAuth, except the public ones", async () => {
    const files = await routeFiles(API_DIR);
    expect(files.length).toBeGreaterThan(10);
    const unguarded: string[] = [];
    for (const file of files) {
      const route = `/api/v1/${path.relative(API_DIR, path.dirname(file)).split(path.sep).join("/")}`;
      if (PUBLIC_ROUTES.has(route)) continue;
      const text = await fs.readFile(file, "utf8");
      for (const [, method] of text.matchAll(/export const (GET|POST|PUT|PATCH|DELETE)\b\s*=\s*([^;]*)/g)) {
        const rhs = text.slice(text.indexOf(`export const ${method}`));
        if (!/^export const \w+\s*=\s*(withHttpMetrics\([^,]+,\s*)?withAuth(<[^>]*>)?\(/.test(rhs))
          unguarded.push(`${route} ${method}`);
      }
    }
    expect(unguarded).toEqual([]);
  });

  it("is described in the OpenAPI document", async () => {
    const files = await routeFiles(API_DIR);
    const described = Object.keys(OPENAPI.paths);
    const missing = files.map(apiPath).filter((p) => p !== "/api/v1/[...path]" && !described.includes(p));
    expect(missing).toEqual([]);
  });
});
