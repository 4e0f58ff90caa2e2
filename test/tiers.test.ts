import fs from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import config, { SERVER_TESTS, SLOW_TESTS } from "../vitest.config";

const ROOT = path.resolve(import.meta.dirname, "..");

interface Project {
  test: { name: string; include: string[]; exclude?: string[] };
}

/** `npm test` runs everything, the soak and the demo run are their own tier, run once in CI. */
describe("test tiers", () => {
  const projects = (config.test?.projects ?? []) as Project[];
  const byName = new Map(projects.map((p) => [p.test.name, p.test]));

  it("puts the soak and the 60 s demo run in the slow project, and keeps them out of the fast one", async () => {
    // test/start.test.ts starts its own embedded PostgreSQL whatever DATABASE_URL says: a second pass repeats it exactly.
    expect(SLOW_TESTS).toEqual(expect.arrayContaining(["lib/soak/soak.test.ts", "lib/demo/demo.test.ts", "test/start.test.ts"]));
    for (const file of SLOW_TESTS) await fs.access(path.join(ROOT, file));
    expect(byName.get("slow")?.include).toEqual(SLOW_TESTS);
    expect(byName.get("fast")?.exclude).toEqual(expect.arrayContaining(SLOW_TESTS));
  });

  it("puts the real-server tests in their own project, after the build, and keeps them out of the fast one", async () => {
    expect(byName.get("server")?.include).toEqual(SERVER_TESTS);
    expect(byName.get("fast")?.exclude).toEqual(expect.arrayContaining(SERVER_TESTS));
    const manifest = JSON.parse(await fs.readFile(path.join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    const steps = (manifest.scripts.test ?? "").split("&&").map((step) => step.trim());
    expect(steps.indexOf("npm run build")).toBeGreaterThanOrEqual(0);
    expect(steps.indexOf("npm run build")).toBeLessThan(steps.indexOf("npm run test:unit"));
  });

  it("has CI run the slow tier once: the embedded-PostgreSQL pass is the fast tier and the broker soaks only", async () => {
    const ci = await fs.readFile(path.join(ROOT, ".ci/run"), "utf8");
    const unitRuns = ci
      .split("\n")
      // The commands CI runs: each npm test invocation is the tail of a run_step line or its continuation.
      .filter((line) => /npm (run )?test(:unit|:fast|:slow)?\b/.test(line) && /^\s*(run_step |npm )/.test(line));
    expect(unitRuns).toEqual([
      expect.stringMatching(/run_step \S+ npm test$/),
      expect.stringMatching(/npm run test:unit -- --project fast$/),
      expect.stringMatching(/npm run test:unit -- --project slow lib\/soak\/soak\.test\.ts -t "BullMQ, RabbitMQ and NATS"$/),
    ]);
    const manifest = JSON.parse(await fs.readFile(path.join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts["test:unit"]).toBe("vitest run"); // npm test still runs both tiers
  });
});
