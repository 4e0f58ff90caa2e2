import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Three tiers, one `vitest run`: `fast` (unit and integration tests), `slow` (the 20,000-delivery
 * soak, the 60 s demo run, both packages installed from their tarballs and `npm start` on its own
 * embedded PostgreSQL: whole-system runs that prove nothing new when repeated on a second PostgreSQL) and `server` (the built console under `npm start`, reached over HTTP: test/server/).
 * `npm test` runs all three, after `npm run build`; `vitest run --project fast` runs the first
 * alone, as .ci/run does for its embedded-PostgreSQL pass.
 */
export const SLOW_TESTS = [
  "lib/soak/soak.test.ts",
  "lib/demo/demo.test.ts",
  "lib/demo/demo-brokers.test.ts",
  "test/install.test.ts",
  "test/start.test.ts",
];
export const SERVER_TESTS = ["test/server/**/*.test.ts"];

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The server tier's teardown stops `npm start`, which takes up to 9 s to stop its console.
    teardownTimeout: 30_000,
    reporters: process.env.ONCEBOARD_TEST_RESULTS ? ["default", "json"] : ["default"],
    outputFile: process.env.ONCEBOARD_TEST_RESULTS ? { json: process.env.ONCEBOARD_TEST_RESULTS } : undefined,
    projects: [
      {
        extends: true,
        test: {
          name: "fast",
          // Vitest's default is one worker fewer than the cores: one on a 2-core CI machine, where
          // these files mostly wait on PostgreSQL, brokers and child processes. Two at once took
          // the embedded pass from 758 s to 450 s with the same results (docs/architecture.md, Test tiers).
          maxWorkers: Math.max(2, os.availableParallelism() - 1),
          include: [
            "lib/**/*.test.ts",
            "test/**/*.test.ts",
            "scripts/**/*.test.ts",
            "components/**/*.test.{ts,tsx}",
            "app/**/*.test.ts",
            "deploy/**/*.test.ts",
            "bench/**/*.test.ts",
          ],
          exclude: ["**/node_modules/**", ...SLOW_TESTS, ...SERVER_TESTS],
        },
      },
      // One file at a time: each is a whole system (workers, brokers, a console) that loads the machine.
      { extends: true, test: { name: "slow", include: SLOW_TESTS, maxWorkers: 1 } },
      // One console for the whole project (test/server/global-setup.ts), shared by its files.
      {
        extends: true,
        test: {
          name: "server",
          include: SERVER_TESTS,
          globalSetup: ["test/server/global-setup.ts"],
          testTimeout: 180_000,
          maxWorkers: 1,
        },
      },
    ],
  },
});
