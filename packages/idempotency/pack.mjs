#!/usr/bin/env node
// `npm run pack:lib`: the worker library as an installable package. Builds it (build.mjs), writes
// the manifest (package.json, whose dependency ranges must start at the versions this
// repository's package.json pins and tests), adds README, CHANGELOG and LICENSE, runs `npm pack`,
// then checks the tarball as its users' tools will read it: publint (the manifest and exports
// map) and @arethetypeswrong/cli (types resolve under TypeScript's node16 and bundler resolution,
// ESM; CommonJS consumers load it through require(esm), Node 20.19+, which attw does not model,
// hence its esm-only profile). Prints the tarball's path last.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { BUILD, buildLibrary, HERE, ROOT, readManifest } from "./build.mjs";

buildLibrary();

const repo = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
const manifest = readManifest();
for (const [name, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies })) {
  const pinned = repo.dependencies?.[name] ?? repo.devDependencies?.[name];
  if (range !== `^${pinned}`) {
    throw new Error(
      `pack:lib: packages/idempotency/package.json asks for ${name}@${range}, but the repository tests ${name}@${pinned}: make it ^${pinned}`,
    );
  }
}
// The version migrate() records on the schema (lib/idempotency/version.ts) is the package's own.
const versionSource = fs.readFileSync(path.join(ROOT, "lib/idempotency/version.ts"), "utf8");
const recorded = /LIBRARY_VERSION: string = "([^"]+)"/.exec(versionSource)?.[1];
if (recorded !== manifest.version) {
  throw new Error(
    `pack:lib: lib/idempotency/version.ts says ${recorded}, packages/idempotency/package.json ${manifest.version} (npm run version:packages keeps them together)`,
  );
}
fs.writeFileSync(path.join(BUILD, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
for (const file of ["README.md", "CHANGELOG.md"]) fs.copyFileSync(path.join(HERE, file), path.join(BUILD, file));
fs.copyFileSync(path.join(ROOT, "LICENSE"), path.join(BUILD, "LICENSE"));

const packed = execFileSync("npm", ["pack", "--json", "--pack-destination", HERE], { cwd: BUILD, encoding: "utf8" });
const [{ filename, size, unpackedSize }] = JSON.parse(packed);
const tarball = path.join(HERE, filename);

const bin = (name) => path.join(ROOT, "node_modules/.bin", name);
execFileSync(bin("publint"), ["run", BUILD, "--strict"], { stdio: ["ignore", process.stderr, process.stderr] });
execFileSync(bin("attw"), [tarball, "--profile", "esm-only", "--format", "ascii"], {
  stdio: ["ignore", process.stderr, process.stderr],
});
process.stderr.write(
  `pack:lib: ${filename}: ${(size / 1024).toFixed(0)} kB packed, ${(unpackedSize / 1024).toFixed(0)} kB unpacked\n`,
);
process.stdout.write(`${tarball}\n`);
