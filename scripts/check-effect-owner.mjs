// The worker library owns the effects table: only lib/idempotency writes it (an INSERT, UPDATE or
// DELETE on effects, schema-qualified or not, a partition included) or computes its claim's
// advisory-lock key (the hash of tenant and key joined by chr(1), see sql/onceboard_claim.sql). Anything else that
// needs to change an effect asks the library (effects.*, releaseClaim, maintain). `npm run lint`
// runs this from scripts/check-layers.mjs.
//
// Exempt: what prepares fixtures and measures, never what ships:
// - tests and their harness (*.test.ts, *.node-test.ts, anything under a test/ or testing/ folder:
//   seeders such as lib/features/keys-and-effects/testing/seed-keys.ts),
// - bench/ (seeds the rows a benchmark measures, and the bare INSERT it compares a claim with),
// - the demo's two seeders listed in DEMO_SEEDERS, each with its reason; a listed file that no
//   longer writes the table fails the check (remove it from the list),
// - prisma/ (migrations are immutable history) and generated code, which the walk skips.
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");

/** Demo code that writes effects rows for the demo's own data, never a worker's. */
export const DEMO_SEEDERS = {
  "lib/demo/history.ts": "seeds a week of demo history (effects rows behind the rollups) in one statement",
  "lib/demo/reset.ts": "deletes the demo's rows (effects.marked) when the demo is reset",
};

const TOP = ["app", "components", "lib", "bench", "scripts"];
const SKIPPED_DIRS = new Set(["node_modules", ".next", ".git", ".onceboard", "generated", "test-results", "playwright-report"]);
const SOURCE = /\.(ts|tsx|mts|js|mjs|sql)$/;

const isExempt = (file) =>
  file.startsWith("lib/idempotency/") ||
  file.startsWith("bench/") ||
  /\.test\.tsx?$|\.node-test\.ts$|(^|\/)(test|testing)\//.test(file);

/** A write of effects (or one of its partitions, effects_pYYYYMMDD…), optionally schema-qualified. */
const WRITE =
  /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:ONLY\s+)?(?:"?[a-z_][a-z0-9_]*"?\.)?"?effects(?:_[pw]\d{8}\w*)?"?(?![\w"])/gi;
/** The claim's lock key: a hash of tenant and key joined by chr(1), or an advisory lock on a hash of a concatenation. */
const LOCK_KEY =
  /hashtextextended\s*\([^;)]*\|\|\s*chr\s*\(\s*1\s*\)|pg_(?:try_)?advisory(?:_xact)?_lock(?:_shared)?\s*\(\s*hashtext\w*\s*\([^;)]*\|\|/gi;

function sourceFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      if (SKIPPED_DIRS.has(entry.name) || entry.name.startsWith(".")) continue;
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (SOURCE.test(entry.name)) out.push(rel);
    }
  };
  for (const top of TOP) if (fs.existsSync(path.join(root, top))) walk(top);
  return out;
}

const lineOf = (text, index) => text.slice(0, index).split("\n").length;

/**
 * Every place outside the library that writes effects or computes its lock key, `{ file, line,
 * what }`, and every listed demo seeder that no longer does (`stale`). `files` maps path → text
 * (default: the tree under `root`).
 */
export function checkEffectOwner({ root = ROOT, files } = {}) {
  const texts = files ?? Object.fromEntries(sourceFiles(root).map((f) => [f, fs.readFileSync(path.join(root, f), "utf8")]));
  const problems = [];
  const seedersWriting = new Set();
  for (const [file, text] of Object.entries(texts)) {
    if (isExempt(file)) continue;
    const found = [];
    for (const m of text.matchAll(WRITE))
      found.push({ file, line: lineOf(text, m.index), what: `writes effects (${m[0].replace(/\s+/g, " ")})` });
    for (const m of text.matchAll(LOCK_KEY))
      found.push({ file, line: lineOf(text, m.index), what: "computes the claim's advisory-lock key" });
    if (Object.hasOwn(DEMO_SEEDERS, file)) {
      if (found.some((f) => f.what.startsWith("writes"))) seedersWriting.add(file);
      problems.push(...found.filter((f) => !f.what.startsWith("writes")));
      continue;
    }
    problems.push(...found);
  }
  // Judged in trees that hold the seeder (a scratch tree the layer test builds holds none).
  const stale = files
    ? []
    : Object.keys(DEMO_SEEDERS).filter((file) => fs.existsSync(path.join(root, file)) && !seedersWriting.has(file));
  return { problems, stale };
}

/** Prints the problems; true when there are none. */
export function reportEffectOwner(options) {
  const { problems, stale } = checkEffectOwner(options);
  for (const p of problems)
    process.stderr.write(
      `effects: ${p.file}:${p.line} ${p.what}: only lib/idempotency may; ask the library (effects.*, releaseClaim)\n`,
    );
  for (const file of stale)
    process.stderr.write(
      `effects: ${file} no longer writes effects: remove it from DEMO_SEEDERS in scripts/check-effect-owner.mjs\n`,
    );
  return problems.length === 0 && stale.length === 0;
}
