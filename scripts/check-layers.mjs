#!/usr/bin/env node
// The layout table of DESIGN.md (docs/architecture.md), checked on every import: `npm run lint`
// runs this after Biome. An import is an arrow from the importing file's layer to the imported
// file's layer; arrows point down the table, never up or sideways. Known exceptions (today's
// arrows inside the worker library's folders, which another change removes) are listed below and
// reported as such, so a new one fails and a fixed one is noticed.
import fs from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * Layers, most specific prefix first. `may` lists the layers (or `pkg:` npm packages, for the
 * worker library) a file in the layer may import besides its own layer. `public` names the files
 * other layers may import from a layer (its entry points); unset: any file.
 */
export const LAYERS = [
  {
    name: "lib/idempotency",
    holds: "the worker library (its own package)",
    may: [],
    packages: ["pg", "prom-client"],
    public: ["lib/idempotency/index.ts", "lib/idempotency/testing/index.ts"],
  },
  {
    name: "lib/queues",
    holds: "broker adapters, each its own entry point",
    may: ["lib/idempotency"],
    public: [
      "lib/queues/index.ts",
      "lib/queues/pgboss.ts",
      "lib/queues/bullmq.ts",
      "lib/queues/generic.ts",
      "lib/queues/core.ts",
    ],
  },
  { name: "lib/config.ts", holds: "the one zod-validated config", may: [] },
  // lib/db and lib/console phrase database failures from the library's one PostgreSQL error table.
  {
    name: "lib/db",
    holds: "pool, Prisma client, embedded Postgres, migrations",
    may: ["lib/config.ts", "lib/idempotency"],
  },
  // Read models take a Scope (lib/auth/scope.ts), as a type only: see TYPE_ONLY_OUTSIDE.
  {
    name: "lib/console",
    holds: "read models",
    may: ["lib/db", "lib/idempotency", "lib/retention", "lib/config.ts", "lib/auth/scope.ts"],
  },
  {
    name: "lib/retention",
    holds: "partition manager",
    may: ["lib/db", "lib/idempotency", "lib/config.ts", "lib/auth/scope.ts"],
  },
  // lib/auth wraps route handlers (withAuth), so it answers with lib/api's error table.
  {
    name: "lib/auth",
    holds: "tokens, sessions, roles, audit, audited admin actions",
    may: ["lib/api", "lib/console", "lib/db", "lib/idempotency", "lib/config.ts"],
  },
  { name: "lib/demo", holds: "the demo workload", may: ["lib/idempotency", "lib/queues"] },
  // The soak drives the demo's workload through the adapters' public entry points, as a user's worker would.
  {
    name: "lib/soak",
    holds: "the fault-injection soak",
    may: ["lib/demo", "lib/queues", "lib/idempotency", "lib/db", "lib/config.ts"],
  },
  { name: "lib/api", holds: "HTTP helpers for route handlers", may: ["lib/console", "lib/retention", "lib/config.ts"] },
  {
    name: "app",
    holds: "routes",
    may: ["lib/api", "lib/console", "lib/auth", "lib/retention", "lib/config.ts", "components"],
  },
  { name: "components", holds: "React components", may: [], types: true },
  {
    name: "bench",
    holds: "benchmarks through public APIs",
    may: [
      "lib/idempotency",
      "lib/queues",
      "lib/db",
      "lib/auth",
      "lib/console",
      "lib/retention",
      "lib/config.ts",
      "scripts",
      "test",
    ],
  },
];

/**
 * Today's arrows out of the library folders (lib/idempotency, lib/queues), which the library's own
 * change removes; each is `from -> to`. A new arrow fails the check, and so does an exception that
 * is no longer needed (remove it here).
 */
export const KNOWN_EXCEPTIONS = [];

/**
 * Files that the other layers may import as types only (`import type …`): their values are for
 * the layers named here (and tests). A Scope is made by lib/auth alone — withAuth hands it to route
 * handlers, requirePageScope to pages — and by operators' benchmarks, which hold the database
 * themselves; a page or route that builds its own would read past the session's tenant.
 */
export const TYPE_ONLY_OUTSIDE = {
  "lib/auth/scope.ts": {
    layers: ["lib/auth", "bench"],
    why: "a Scope comes from withAuth or requirePageScope: import its type only",
  },
};

// Imports and re-exports that bring values (not `import type` / `export type`).
const VALUE_IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?!type\s)(?:[^"'`;]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function valueImportsOf(text) {
  const specs = [];
  for (const match of text.matchAll(VALUE_IMPORT)) specs.push(match[1] ?? match[2]);
  return specs;
}

/** Tests and their harness may reach any layer's files for setup (the rules are about shipped code). */
const isTestFile = (file) => /\.test\.tsx?$|\.node-test\.ts$|(^|\/)test\/|(^|\/)testing\/(?!index\.ts$)/.test(file);

function layerOf(file) {
  return LAYERS.find((layer) => file === layer.name || file.startsWith(`${layer.name}/`));
}

const SOURCE = /\.(ts|tsx|mts|js|mjs)$/;
const IGNORED_DIRS = new Set([
  "node_modules",
  ".next",
  ".git",
  ".onceboard",
  "generated",
  "test-results",
  "playwright-report",
  ".scratch",
]);

export function sourceFiles(root = ROOT) {
  const out = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      if (IGNORED_DIRS.has(entry.name) || entry.name.startsWith(".")) continue;
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(rel);
    }
  };
  for (const top of ["app", "components", "lib", "bench"]) if (fs.existsSync(path.join(root, top))) walk(top);
  return out;
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^"'`;]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

export function importsOf(text) {
  const specs = [];
  for (const match of text.matchAll(IMPORT)) specs.push(match[1] ?? match[2]);
  return specs;
}

/** A repository file for a specifier, or undefined for a package. */
function resolve(root, from, spec) {
  let base;
  if (spec.startsWith("@/")) base = spec.slice(2);
  else if (spec.startsWith(".")) base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  else return undefined;
  for (const candidate of [
    base,
    `${base}.ts`,
    `${base}.tsx`,
    `${base}/index.ts`,
    `${base}/index.tsx`,
    base.replace(/\.js$/, ".ts"),
  ]) {
    const full = path.join(root, candidate);
    if (fs.existsSync(full) && fs.statSync(full).isFile()) return candidate;
  }
  return base;
}

const packageName = (spec) => (spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]);
const isBuiltin = (spec) => spec.startsWith("node:") || builtinModules.includes(packageName(spec));

/** Every arrow that breaks the table: `{ from, to, why }`. `files` maps path → text (default: the tree). */
export function checkLayers({ root = ROOT, files } = {}) {
  const texts = files ?? Object.fromEntries(sourceFiles(root).map((f) => [f, fs.readFileSync(path.join(root, f), "utf8")]));
  const problems = [];
  for (const [from, text] of Object.entries(texts)) {
    const layer = layerOf(from);
    if (!layer) continue;
    const test = isTestFile(from);
    if (!test) {
      for (const spec of valueImportsOf(text)) {
        const to = resolve(root, from, spec);
        const rule = to === undefined ? undefined : TYPE_ONLY_OUTSIDE[to];
        if (rule && !rule.layers.includes(layer.name)) problems.push({ from, to, why: rule.why });
      }
    }
    for (const spec of importsOf(text)) {
      const to = resolve(root, from, spec);
      if (to === undefined) {
        // An npm package: only the worker library is restricted (it ships with `pg` as its one dependency).
        if (layer.packages && !test && !isBuiltin(spec) && !layer.packages.includes(packageName(spec))) {
          problems.push({ from, to: spec, why: `${layer.name} may import only ${layer.packages.join(", ")} and node built-ins` });
        }
        continue;
      }
      const target = layerOf(to);
      if (target === layer) continue;
      if (test && !layer.packages) continue;
      if (test && (to.startsWith("test/") || to.startsWith("vitest"))) continue;
      if (layer.types) {
        if (!/-types\.ts$/.test(to))
          problems.push({ from, to, why: "components may import only lib/**/*-types.ts from the rest of the tree" });
        continue;
      }
      const allowed = layer.may.some(
        (name) => to === name || to.startsWith(`${name}/`) || (name === "test" && to.startsWith("test/")),
      );
      if (!allowed) {
        problems.push({
          from,
          to,
          why: `${layer.name} may import ${layer.may.length ? layer.may.join(", ") : "nothing else of this repository"}`,
        });
        continue;
      }
      if (target?.public && !target.public.includes(to)) {
        problems.push({ from, to, why: `${target.name} is imported through its entry points only: ${target.public.join(", ")}` });
      }
    }
  }
  return problems;
}

function main() {
  // --root <dir>: check another tree (the layer test plants an upward import in a scratch copy).
  const at = process.argv.indexOf("--root");
  const problems = checkLayers(at > 0 ? { root: path.resolve(process.argv[at + 1]) } : {});
  const key = (p) => `${p.from} -> ${p.to}`;
  const known = new Set(KNOWN_EXCEPTIONS);
  const fresh = problems.filter((p) => !known.has(key(p)));
  const stale = KNOWN_EXCEPTIONS.filter((k) => !problems.some((p) => key(p) === k));
  for (const p of fresh) process.stderr.write(`layers: ${p.from} imports ${p.to}: ${p.why}\n`);
  for (const k of stale)
    process.stderr.write(`layers: known exception no longer needed, remove it from scripts/check-layers.mjs: ${k}\n`);
  const knownCount = problems.length - fresh.length;
  if (fresh.length > 0 || stale.length > 0) process.exit(1);
  process.stdout.write(
    `layers: every import follows the layout table${knownCount ? ` (${knownCount} known exception(s) in the library folders)` : ""}\n`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) main();
