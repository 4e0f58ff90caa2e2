// Compiles the worker library for its package: lib/idempotency and the broker adapters of
// lib/queues (tsconfig.pack.json: ESM + .d.ts, the source files stay where they are), gives every
// relative import an explicit `.js` (Node's ESM loader needs it) and copies the schema's
// migrations (PostgreSQL's and MySQL's) beside the compiled migrate.js, which reads them at run time. Shared by pack.mjs
// (the tarball) and api-report.mjs (the public API's report, which reads the .d.ts).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export const HERE = import.meta.dirname;
export const ROOT = path.resolve(HERE, "../..");
export const BUILD = path.join(HERE, "build");
export const OUT = path.join(BUILD, "dist");

/** The package's manifest: its exports map is also the list of entry points the API report covers. */
export function readManifest() {
  return JSON.parse(fs.readFileSync(path.join(HERE, "package.json"), "utf8"));
}

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

export function buildLibrary() {
  fs.rmSync(BUILD, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", path.join(HERE, "tsconfig.pack.json")],
    { stdio: "inherit" },
  );
  addExtensions(OUT);
  for (const migrations of ["migrations", "migrations-mysql"]) {
    fs.cpSync(path.join(ROOT, "lib/idempotency", migrations), path.join(OUT, "lib/idempotency", migrations), { recursive: true });
  }

  // Nothing outside the two library folders may have been pulled into the package.
  const emitted = fs
    .readdirSync(OUT, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".js"));
  const strays = emitted.filter((f) => !/^lib\/(idempotency|queues)\//.test(f));
  if (strays.length > 0)
    throw new Error(`pack:lib: files from outside the library folders were compiled in: ${strays.join(", ")}`);
  return OUT;
}
