import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: [
      "lib/**/*.test.ts",
      "test/**/*.test.ts",
      "scripts/**/*.test.ts",
      "components/**/*.test.{ts,tsx}",
      "app/**/*.test.ts",
      "deploy/**/*.test.ts",
    ],
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: process.env.ONCEBOARD_TEST_RESULTS ? ["default", "json"] : ["default"],
    outputFile: process.env.ONCEBOARD_TEST_RESULTS ? { json: process.env.ONCEBOARD_TEST_RESULTS } : undefined,
  },
});
