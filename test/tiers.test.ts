import fs from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import config, { SLOW_TESTS } from "../vitest.config";

const ROOT = path.resolve(import.meta.dirname, "..");

interface Project {
  test: { name: string; include: string[]; exclude?: string[] };
}

/** `npm test` runs everything, the soak and the demo run are their own tier, run once in CI. */
describe("test tiers", () => {
  const projects = (config.test?.projects ?? []) as Project[];
  const byName = new Map(projects.map((p) => [p.test.name, p.test]));

  it("puts the soak and the 60 s demo run in the slow project, and keeps them out of the fast one", async () => {
    expect(SLOW_TESTS).toEqual(expect.arrayContaining(["lib/soak/soak.test.ts", "lib/demo/demo.test.ts"]));
    for (const file of SLOW_TESTS) await fs.access(path.join(ROOT, file));
    expect(byName.get("slow")?.include).toEqual(SLOW_TESTS);
    expect(byName.get("fast")?.exclude).toEqual(expect.arrayContaining(SLOW_TESTS));
  });

  it("has CI run the slow tier once: the embedded-PostgreSQL pass is the fast tier only", async () => {
    const ci = await fs.readFile(path.join(ROOT, ".ci/run"), "utf8");
    const unitRuns = ci
      .split("\n")
      .filter((line) => /npm (run )?test(:unit|:fast|:slow)?\b/.test(line) && line.includes("|| status=1"));
    expect(unitRuns).toEqual([
      expect.stringMatching(/npm test \|\| status=1/),
      expect.stringMatching(/npm run test:unit -- --project fast/),
    ]);
    const manifest = JSON.parse(await fs.readFile(path.join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts["test:unit"]).toBe("vitest run"); // npm test still runs both tiers
  });
});
