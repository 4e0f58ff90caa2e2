// Sums passed/failed over every Vitest and Playwright JSON report in a folder and prints the
// closing line CI reads: "N passed, N failed" (", N skipped" when any were skipped).
// Usage: node scripts/sum-test-results.mjs <dir> [--failed-steps N]
import fs from "node:fs";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";

const dir = process.argv[2] ?? ".test-results";
let passed = 0;
let failed = 0;
let skipped = 0;
/** Names of failed tests with the first line of their error, printed after the counts. */
const failures = [];
/** Playwright tests that failed and then passed on their retry (CI only), with the first error. */
const flaky = [];
const firstLine = (text) =>
  stripVTControlCharacters(String(text ?? ""))
    .trim()
    .split("\n")[0]
    .slice(0, 300);
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
    for (const suite of report.testResults ?? []) {
      for (const test of suite.assertionResults ?? []) {
        if (test.status === "failed") {
          failures.push(`${file}: ${suite.name}: ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
        }
      }
      if (suite.status === "failed" && !(suite.assertionResults ?? []).some((t) => t.status === "failed")) {
        failures.push(`${file}: ${suite.name}: ${firstLine(suite.message)}`);
      }
    }
  } else if (report.stats) {
    // Playwright
    passed += report.stats.expected + (report.stats.flaky ?? 0);
    failed += report.stats.unexpected;
    skipped += report.stats.skipped ?? 0;
    console.log(`${file}: ${report.stats.expected} passed, ${report.stats.unexpected} failed`);
    collectPlaywrightFailures(file, report.suites ?? [], []);
  }
}
for (const name of flaky.slice(0, 20)) console.log(`FLAKY (passed on retry) ${name}`);
for (const failure of failures.slice(0, 20)) console.log(`FAILED ${failure}`);
if (failures.length > 20) console.log(`... and ${failures.length - 20} more failed tests`);

/** Playwright nests suites (file, describe) around specs; a spec's test failed when its outcome is "unexpected". */
function collectPlaywrightFailures(file, suites, titles) {
  for (const suite of suites) {
    const path = [...titles, suite.title].filter(Boolean);
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests ?? []) {
        const error = test.results?.find((r) => r.error)?.error?.message;
        const name = `${file}: ${[...path, spec.title].join(" › ")} [${test.projectName}]: ${firstLine(error)}`;
        if (test.status === "unexpected") failures.push(name);
        // Passed on its retry: counted as passed, and named, so an intermittent failure stays visible.
        if (test.status === "flaky") flaky.push(name);
      }
    }
    collectPlaywrightFailures(file, suite.suites ?? [], path);
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
