import fs from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DECLARED, type DeclaredRoute } from "../../lib/auth/declare-route";
import { OPENAPI, ROUTES } from "../../lib/routes/openapi";

const ROOT = path.resolve(import.meta.dirname, "../..");
const API_DIR = path.join(ROOT, "app/api/v1");
/** Answer before anyone can sign in (npm start and load balancers poll health). */
const PUBLIC_ROUTES = new Set(["/api/v1/health"]);
/** Routes nothing: any /api/v1 path no declaration claims answers its JSON 404, after authentication. */
const CATCH_ALL = "/api/v1/{...path}";
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

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

/** app/api/v1/effects/[key]/route.ts → /api/v1/effects/{key}: the template the document writes. */
const templateOf = (file: string) =>
  `/api/v1/${path.relative(API_DIR, path.dirname(file)).split(path.sep).join("/")}`.replace(/\[([.\w]+)\]/g, "{$1}");

/**
 * A route file is its declarations served, nothing else: imports, the segment config Next reads
 * from the file itself, and one serve(...) of the feature's declarations.
 */
const DECLARATION_FILE =
  /^(import [^;]+;\n)+\n(\/\/[^\n]*\n)*export const dynamic = "force-dynamic";\n\nexport const \{ GET, POST, PUT, PATCH, DELETE \} = serve\([\w, ]+\);\n$/;

describe("every /api/v1 route", () => {
  it("is a declaration served by the file of its path, and nothing else", async () => {
    const files = (await routeFiles(API_DIR)).filter((f) => templateOf(f) !== CATCH_ALL);
    expect(files.length).toBeGreaterThan(30);
    const problems: string[] = [];
    for (const file of files) {
      const template = templateOf(file);
      if (!DECLARATION_FILE.test(await fs.readFile(file, "utf8"))) problems.push(`${template}: not only serve(<declarations>)`);
      const handlers = (await import(file)) as Record<string, unknown>;
      const declared = METHODS.flatMap((m) => {
        const route = (handlers[m] as { [DECLARED]?: DeclaredRoute } | undefined)?.[DECLARED];
        return route ? [route] : [];
      });
      if (declared.length === 0) problems.push(`${template}: serves no declaration`);
      for (const route of declared) {
        if (route.path !== template) problems.push(`${template}: serves ${route.method} ${route.path}`);
        if (route.role === "public" && !PUBLIC_ROUTES.has(template)) problems.push(`${template}: public`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("has a file, and every file's path is in the OpenAPI document", async () => {
    const templates = (await routeFiles(API_DIR)).map(templateOf).filter((t) => t !== CATCH_ALL);
    expect(new Set(ROUTES.map((r) => r.path))).toEqual(new Set(templates));
    expect(new Set(Object.keys(OPENAPI.paths))).toEqual(new Set(templates));
  });

  it("is declared once: one declaration per method and path", () => {
    const seen = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(seen.length).toBe(new Set(seen).size);
  });
});
