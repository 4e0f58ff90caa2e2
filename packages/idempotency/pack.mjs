#!/usr/bin/env node
// `npm run pack:lib`: the worker library as an installable package. Compiles lib/idempotency and
// the broker adapters of lib/queues (tsconfig.pack.json: ESM + .d.ts, the source files stay where
// they are), gives every relative import an explicit `.js` (Node's ESM loader needs it), writes
// the manifest from package.template.json with the versions this repository's package.json pins,
// and runs `npm pack`. Prints the tarball's path last.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const HERE = import.meta.dirname;
const ROOT = path.resolve(HERE, "../..");
const BUILD = path.join(HERE, "build");
const OUT = path.join(BUILD, "dist");

/** The package's one dependency: what lib/idempotency needs at run time. */
const DEPENDENCIES = ["pg"];
/** Optional peers: prom-client only for metrics, each broker only for its adapter's entry point. */
const PEERS = ["prom-client", "pg-boss", "bullmq", "ioredis"];

fs.rmSync(BUILD, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", path.join(HERE, "tsconfig.pack.json")],
  {
    stdio: "inherit",
  },
);

/** `from "./x"` → `from "./x.js"` (or `./x/index.js`) in every emitted .js and .d.ts. */
function addExtensions(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      addExtensions(full);
      continue;
    }
    if (!/\.(js|d\.ts)$/.test(entry.name)) continue;
    const text = fs.readFileSync(full, "utf8");
    const fixed = text.replace(/(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(["'])(\.\.?\/[^"']*)\2/g, (match, lead, quote, spec) => {
      if (/\.(js|json)$/.test(spec)) return match;
      const base = path.resolve(path.dirname(full), spec);
      if (fs.existsSync(`${base}.js`) || fs.existsSync(`${base}.d.ts`)) return `${lead}${quote}${spec}.js${quote}`;
      if (fs.existsSync(path.join(base, "index.js")) || fs.existsSync(path.join(base, "index.d.ts"))) {
        return `${lead}${quote}${spec}/index.js${quote}`;
      }
      throw new Error(`pack:lib: ${path.relative(OUT, full)} imports ${spec}, which is not part of the package`);
    });
    if (fixed !== text) fs.writeFileSync(full, fixed);
  }
}
addExtensions(OUT);
// The schema's migrations ship beside the compiled migrate.js, which reads them at run time.
fs.cpSync(path.join(ROOT, "lib/idempotency/migrations"), path.join(OUT, "lib/idempotency/migrations"), { recursive: true });

// Nothing outside the two library folders may have been pulled into the package.
const emitted = fs
  .readdirSync(OUT, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith(".js"));
const strays = emitted.filter((f) => !/^lib\/(idempotency|queues)\//.test(f));
if (strays.length > 0) throw new Error(`pack:lib: files from outside the library folders were compiled in: ${strays.join(", ")}`);

const repo = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
const versionOf = (name) => {
  const version = repo.dependencies?.[name] ?? repo.devDependencies?.[name];
  if (!version) throw new Error(`pack:lib: ${name} is not in package.json`);
  return version;
};
const manifest = JSON.parse(fs.readFileSync(path.join(HERE, "package.template.json"), "utf8"));
manifest.dependencies = Object.fromEntries(DEPENDENCIES.map((name) => [name, `^${versionOf(name)}`]));
manifest.peerDependencies = Object.fromEntries(PEERS.map((name) => [name, `^${versionOf(name)}`]));
fs.writeFileSync(path.join(BUILD, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
fs.copyFileSync(path.join(ROOT, "docs/worker-library.md"), path.join(BUILD, "README.md"));

const packed = execFileSync("npm", ["pack", "--json", "--pack-destination", HERE], { cwd: BUILD, encoding: "utf8" });
const [{ filename }] = JSON.parse(packed);
process.stdout.write(`${path.join(HERE, filename)}\n`);
