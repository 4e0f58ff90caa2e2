import path from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Two tiers, one `vitest run`: `fast` (unit and integration tests) and `slow` (the 20,000-delivery
 * soak and the 60 s demo run: whole-system runs that prove nothing new when repeated on a second
 * PostgreSQL). `npm test` runs both; `vitest run --project fast` runs the first alone, as .ci/run
 * does for its embedded-PostgreSQL pass.
 */
export const SLOW_TESTS = ["lib/soak/soak.test.ts", "lib/demo/demo.test.ts"];

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: process.env.ONCEBOARD_TEST_RESULTS ? ["default", "json"] : ["default"],
    outputFile: process.env.ONCEBOARD_TEST_RESULTS ? { json: process.env.ONCEBOARD_TEST_RESULTS } : undefined,
    projects: [
      {
        extends: true,
        test: {
          name: "fast",
          include: [
            "lib/**/*.test.ts",
            "test/**/*.test.ts",
            "scripts/**/*.test.ts",
            "components/**/*.test.{ts,tsx}",
            "app/**/*.test.ts",
            "deploy/**/*.test.ts",
          ],
          exclude: ["**/node_modules/**", ...SLOW_TESTS],
        },
      },
      { extends: true, test: { name: "slow", include: SLOW_TESTS } },
    ],
  },
});
