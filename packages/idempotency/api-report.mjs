#!/usr/bin/env node
// The public API of @onceboard/idempotency, one report per entry point of its exports map
// (packages/idempotency/api/<entry>.api.md), written by @microsoft/api-extractor from the
// package's .d.ts. `npm run lint` runs this and fails when the declared API differs from the
// committed reports, so the surface changes only on purpose: `npm run api:update` rewrites them,
// and the change shows in review.
import fs from "node:fs";
import path from "node:path";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";
import { BUILD, buildLibrary, HERE, ROOT, readManifest } from "./build.mjs";

const update = process.argv.includes("--update");
const REPORTS = path.join(HERE, "api");
const TEMP = path.join(BUILD, "api-temp");

buildLibrary();
fs.mkdirSync(REPORTS, { recursive: true });
fs.mkdirSync(TEMP, { recursive: true });
const manifest = readManifest();
const entries = Object.entries(manifest.exports).filter(([, target]) => typeof target === "object");
const silent = { logLevel: "none", addToApiReportFile: false };
const changed = [];
for (const [subpath, target] of entries) {
  const name = subpath === "." ? "index" : subpath.slice(2);
  const configObject = {
    projectFolder: BUILD,
    mainEntryPointFilePath: path.join(BUILD, target.types),
    compiler: {
      overrideTsconfig: {
        compilerOptions: { target: "ES2022", module: "nodenext", moduleResolution: "nodenext", strict: true, types: ["node"] },
        // The library's own dependencies (pg, pg-boss, prom-client…) resolve from the repository.
        include: [path.join(BUILD, "dist")],
      },
      skipLibCheck: true,
    },
    apiReport: { enabled: true, reportFolder: REPORTS, reportTempFolder: TEMP, reportFileName: `${name}.api.md` },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    newlineKind: "lf",
    messages: {
      compilerMessageReporting: { default: { logLevel: "error" } },
      extractorMessageReporting: { default: silent },
      tsdocMessageReporting: { default: silent },
    },
  };
  const config = ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: path.join(HERE, "api-extractor.json"),
    packageJsonFullPath: path.join(HERE, "package.json"),
  });
  const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false });
  if (result.errorCount > 0) throw new Error(`api-report: ${subpath}: api-extractor reported ${result.errorCount} error(s)`);
  if (result.apiReportChanged) changed.push(`packages/idempotency/api/${name}.api.md`);
}
if (changed.length > 0 && !update) {
  process.stderr.write(
    `api-report: the public API of @onceboard/idempotency changed (${changed.join(", ")}; the new reports are in ${path.relative(ROOT, TEMP)}).\nIf that is intended, run npm run api:update and commit the reports.\n`,
  );
  process.exit(1);
}
process.stderr.write(
  update && changed.length > 0
    ? `api-report: updated ${changed.join(", ")}\n`
    : "api-report: the public API matches the reports\n",
);
