// Sums passed/failed over every Vitest and Playwright JSON report in a folder and prints the
// closing line CI reads: "N passed, N failed" (", N skipped" when any were skipped).
// Usage: node scripts/sum-test-results.mjs <dir> [--failed-steps N]
import fs from "node:fs";
import path from "node:path";

const dir = process.argv[2] ?? ".test-results";
let passed = 0;
let failed = 0;
let skipped = 0;
const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
for (const file of files) {
  let report;
  try {
    report = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"));
  } catch {
    console.log(`${file}: unreadable report, counted as one failure`);
    failed += 1;
    continue;
  }
  if (typeof report.numPassedTests === "number") {
    // Vitest (Jest-compatible JSON)
    passed += report.numPassedTests;
    failed += report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0);
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
    console.log(`${file}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`);
  } else if (report.stats) {
    // Playwright
    passed += report.stats.expected + (report.stats.flaky ?? 0);
    failed += report.stats.unexpected;
    skipped += report.stats.skipped ?? 0;
    console.log(`${file}: ${report.stats.expected} passed, ${report.stats.unexpected} failed`);
  }
}
// Steps that failed without a failing test (lint, the build, Vitest's exit 1 on an unhandled
// error) count as one failure each, so the closing line never reads "0 failed" on a red run.
const stepsFlag = process.argv.indexOf("--failed-steps");
const failedSteps = stepsFlag > 0 ? Number(process.argv[stepsFlag + 1] ?? 0) : 0;
if (failedSteps > 0 && failed === 0) {
  console.log(`${failedSteps} step(s) failed outside any test report (see "failed step:" above)`);
  failed += failedSteps;
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
