import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DECLARED_PAGE, type PageDeclaration } from "../../app/_shared/declare-page";
import { PAGE_QUERIES } from "../../lib/routes/page-queries";

const APP = path.resolve(import.meta.dirname, "../../app");

describe("every page that reads a query string", () => {
  it("is declared with the one URL parse proxy.ts answers the status of", async () => {
    const pages = Object.keys(PAGE_QUERIES);
    expect(pages.length).toBeGreaterThan(5);
    const problems: string[] = [];
    for (const page of pages) {
      const file = path.join(APP, page, "page.tsx");
      const module = (await import(file)) as { default: { [DECLARED_PAGE]?: PageDeclaration<unknown, unknown> } };
      const declared = module.default[DECLARED_PAGE];
      if (!declared) problems.push(`${page}: not declarePage(...)`);
      else if (declared.query !== PAGE_QUERIES[page]) problems.push(`${page}: parses its URL other than the proxy does`);
    }
    expect(problems).toEqual([]);
  });

  it("and no page parses one by the API's rules itself", () => {
    const parsing = fs
      .readdirSync(APP, { recursive: true, encoding: "utf8" })
      .filter((f) => path.basename(f) === "page.tsx")
      .filter((f) =>
        /parseSearchParams|lastValues|invalidPageQuery|requirePageScope/.test(fs.readFileSync(path.join(APP, f), "utf8")),
      );
    expect(parsing).toEqual([]);
  });
});
