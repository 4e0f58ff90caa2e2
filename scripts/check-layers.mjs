#!/usr/bin/env node
// The layout table, checked on every import: `npm run lint` runs this after Biome. An import is an
// arrow from the importing file's layer to the imported file's layer; arrows point down the table,
// never up or sideways. The table in docs/architecture.md is printed from LAYERS below
// (`--print-table`, `--write-table`), and the check fails when the doc's copy is stale.
import fs from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { reportEffectOwner } from "./check-effect-owner.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * The console's features (lib/features/<name>/), each one capability: its contract (zod), its
 * zod-free values (`*-types.ts`), its reads, writes and runners, its routes (routes.ts). Every
 * feature may import the layers of FEATURE_BASE; `may` names the other features it builds on.
 * Listed so that a feature comes after those it imports: the arrows between features form no loop
 * (checked below), and a folder of lib/features not listed here fails the check.
 */
export const FEATURES = [
  {
    name: "violations",
    holds: "uncaught unique violations: the list (the Violations page) and the groups the Overview's banner shows",
    may: [],
  },
  {
    name: "workers",
    holds: "the workers' live counters and proxied `/metrics`, the console's health check",
    may: [],
  },
  {
    name: "reconciliation",
    holds:
      "the console's side of reconciliation: runs and findings read, a finding acknowledged or resolved, a run started, provider setup (the adapters and the reconciler are `lib/reconciliation`)",
    may: [],
  },
  {
    name: "retention-and-gaps",
    holds:
      "partition retention (settings, plan, apply, the console's maintenance schedule), the delivery-gap histogram and the retention advice drawn from it",
    may: [],
  },
  { name: "audit", holds: "the audit log read, exported (itself audited) and its hash chain verified", may: [] },
  { name: "tokens-and-sessions", holds: "API tokens and console sessions listed, created and revoked", may: [] },
  {
    name: "keys-and-effects",
    holds: "effects by key: search, detail (delivery timeline, verdict, provider side), release, each read audited",
    may: ["reconciliation", "violations"],
  },
  {
    name: "overview",
    holds:
      "the on-call Overview: series from the metrics source (rollups or Prometheus), stuck claims, tenant activity, violation counts, runbooks",
    may: ["violations"],
  },
  {
    name: "bulk-actions",
    holds: "bulk release and bulk acknowledge: dry run, snapshot of the items, the background runner, cancel",
    may: ["keys-and-effects", "reconciliation"],
  },
];

/** What every feature may import besides the features its entry names. */
export const FEATURE_BASE = [
  "lib/auth",
  "lib/api",
  "lib/console",
  "lib/db",
  "lib/idempotency",
  "lib/reconciliation",
  "lib/config.ts",
  "lib/format.ts",
  "lib/fields.ts",
];

const featureLayers = (features) =>
  features.map((feature) => ({
    name: `lib/features/${feature.name}`,
    holds: feature.holds,
    may: [...feature.may.map((name) => `lib/features/${name}`), ...FEATURE_BASE],
    features: feature.may,
  }));

/**
 * Layers, most specific prefix first. `may` lists the layers (or `pkg:` npm packages, for the
 * worker library) a file in the layer may import besides its own layer. `public` names the files
 * other layers may import from a layer (its entry points); unset: any file.
 */
export const LAYERS = [
  {
    name: "lib/idempotency",
    holds:
      "the worker library, its own package (`npm run pack:lib`, built by `packages/idempotency/pack.mjs`), its schema's migrations (`migrations/`; `migrations-mysql/` for MySQL and MariaDB) and SQL function sources (`sql/`)",
    may: [],
    // drizzle-orm, @opentelemetry/api and mysql2: optional peers, imported lazily only when the caller uses them.
    packages: ["pg", "prom-client", "drizzle-orm", "@opentelemetry/api", "mysql2"],
    public: [
      "lib/idempotency/index.ts",
      "lib/idempotency/admin.ts",
      "lib/idempotency/states.ts",
      "lib/idempotency/testing/index.ts",
    ],
  },
  {
    name: "lib/queues",
    holds: "broker adapters, each its own entry point",
    may: ["lib/idempotency"],
    public: [
      "lib/queues/index.ts",
      "lib/queues/pgboss.ts",
      "lib/queues/bullmq.ts",
      "lib/queues/rabbitmq.ts",
      "lib/queues/nats.ts",
      "lib/queues/generic.ts",
      "lib/queues/deliveries.ts",
    ],
  },
  { name: "lib/config.ts", holds: "the one zod-validated config; every environment variable is read through it", may: [] },
  { name: "lib/format.ts", holds: "the one formatting module (Intl): times, durations, counts, plurals", may: [] },
  {
    name: "lib/fields.ts",
    holds: "the one set of input refinements every query, path and body field is parsed with: text, times, ids",
    may: [],
    packages: ["zod"],
  },
  // lib/db and lib/console phrase database failures from the library's one PostgreSQL error table.
  {
    name: "lib/db",
    holds:
      "pg pool, Prisma client (`lib/db/prisma.ts`), embedded PostgreSQL, migration applier (calls the library's `migrate()`, moves pre-schema databases: `upgrade-legacy.ts`)",
    may: ["lib/config.ts", "lib/idempotency"],
  },
  {
    name: "lib/console",
    holds:
      "what every feature of the console shares: keyset paging (`keyset.ts`), the database handle and its errors (`database.ts`, `errors.ts`), redaction, the contract's common fields (`common-contract.ts`), the process's lifecycle and HTTP metrics",
    may: ["lib/db", "lib/idempotency", "lib/config.ts", "lib/format.ts", "lib/fields.ts"],
  },
  {
    name: "lib/reconciliation",
    holds: "provider adapters (Stripe through its client, generic HTTP+JSON) and the reconciler: runs, findings, coverage",
    may: ["lib/db", "lib/idempotency", "lib/config.ts"],
  },
  {
    name: "lib/api",
    holds:
      "HTTP helpers for route handlers: the error table (`errors.ts`), parsing (`parse.ts`), the OpenAPI document's builder (`openapi.ts`)",
    may: ["lib/console", "lib/config.ts", "lib/fields.ts"],
  },
  // lib/auth wraps route handlers (withAuth), so it answers with lib/api's error table; its rules
  // (Scope) refuse with lib/console's DomainError, which that table maps to a status.
  {
    name: "lib/auth",
    holds: "identity: tokens, sessions, OIDC, roles, `withAuth`, `Scope`, appending audit rows",
    may: ["lib/api", "lib/console", "lib/db", "lib/idempotency", "lib/config.ts", "lib/fields.ts"],
  },
  ...featureLayers(FEATURES),
  {
    name: "lib/routes",
    holds:
      "what the route layer shares across features: the OpenAPI document (`openapi.ts`), the pages' URL parses, the key lookup and search answered without Next.js's router (`direct-api.ts`)",
    may: ["lib/features", "lib/api", "lib/auth", "lib/console", "lib/config.ts", "lib/fields.ts"],
  },
  // lib/format.ts: the demo's terminal lines write counts as the pages do ("75,318 effects").
  { name: "lib/demo", holds: "the demo workload", may: ["lib/idempotency", "lib/queues", "lib/format.ts"] },
  // The soak drives the demo's workload through the adapters' public entry points, as a user's worker would.
  {
    name: "lib/soak",
    holds: "the fault-injection soak: the demo's workload through the adapters' public entry points",
    may: ["lib/demo", "lib/queues", "lib/idempotency", "lib/db", "lib/config.ts"],
  },
  {
    name: "app",
    holds: "routes: pages and `app/api/v1/**` handlers",
    may: [
      "lib/routes",
      "lib/features",
      "lib/api",
      "lib/console",
      "lib/auth",
      "lib/config.ts",
      "lib/format.ts",
      "lib/fields.ts",
      "components",
    ],
  },
  // Components run in the browser: besides the pure formatting module, only type files of lib, and
  // the contract's inferred types (`import type`: its zod schemas stay on the server).
  // The library's words (lib/idempotency/states.ts) have no dependency: safe in the browser.
  {
    name: "components",
    holds: "React components",
    may: ["lib/format.ts", "lib/idempotency/states.ts"],
    types: true,
    typesOnly: ["lib/features"],
  },
  {
    name: "bench",
    holds: "benchmarks through public APIs",
    may: [
      "lib/idempotency",
      "lib/queues",
      "lib/db",
      "lib/auth",
      "lib/console",
      "lib/features",
      "lib/reconciliation",
      "lib/demo",
      "lib/config.ts",
      "scripts",
      "test",
    ],
  },
];

/**
 * Arrows out of the library folders (lib/idempotency, lib/queues) tolerated while a change removes
 * them; each is `from -> to`. A new arrow fails the check, and so does an exception that is no
 * longer needed (remove it here).
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

/** A repository file for a specifier, or undefined for a package. `known`: files checked from memory (a planted tree). */
function resolveSpec(root, from, spec, known = new Set()) {
  let base;
  if (spec.startsWith("@/")) base = spec.slice(2);
  else if (spec.startsWith(".")) base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  else return undefined;
  const candidates = [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`, base.replace(/\.js$/, ".ts")];
  for (const candidate of candidates) if (known.has(candidate)) return candidate;
  for (const candidate of candidates) {
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
  const known = new Set(Object.keys(texts));
  const resolve = (_root, from, spec) => resolveSpec(root, from, spec, known);
  const problems = [...unlistedFeatures(Object.keys(texts)), ...importLoops(texts, resolve)];
  for (const [from, text] of Object.entries(texts)) {
    const layer = layerOf(from);
    if (!layer) continue;
    const test = isTestFile(from);
    const valueTargets = new Set(valueImportsOf(text).map((spec) => resolve(root, from, spec)));
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
        // An npm package: only the worker library is restricted (it ships with just `layer.packages`).
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
        if (/-types\.ts$/.test(to)) continue;
        const typesOnly = layer.typesOnly?.find((name) => to.startsWith(`${name}/`));
        if (typesOnly) {
          if (valueTargets.has(to))
            problems.push({ from, to, why: `components import ${typesOnly} as types only (\`import type …\`)` });
          continue;
        }
        if (!layer.may.includes(to))
          problems.push({ from, to, why: `components may import only lib/**/*-types.ts and ${layer.may.join(", ")}` });
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

/** A folder of lib/features that FEATURES does not list has no rules: name it there first. */
function unlistedFeatures(files) {
  const listed = new Set(FEATURES.map((feature) => feature.name));
  return files
    .filter((file) => /^lib\/features\//.test(file) && !listed.has(file.split("/")[2]))
    .map((file) => ({
      from: file,
      to: file,
      why: `lib/features/${file.split("/")[2]} is not a feature of FEATURES (scripts/check-layers.mjs): list it with the features it may import`,
    }));
}

/**
 * Files that import each other, directly or round a chain (types included: a type-only loop still
 * ties two modules into one). One problem per loop, naming its files in import order. Tests aside:
 * a test may import what it tests and be imported by nothing.
 */
export function importLoops(texts, resolve) {
  const graph = new Map();
  for (const [file, text] of Object.entries(texts)) {
    if (isTestFile(file)) continue;
    graph.set(file, [...new Set(importsOf(text).map((spec) => resolve(ROOT, file, spec)))]);
  }
  for (const [file, targets] of graph)
    graph.set(
      file,
      targets.filter((to) => graph.has(to)),
    );
  return stronglyConnected(graph).map((component) => {
    const loop = loopThrough(graph, component);
    return { from: loop[0], to: loop[1], why: `import loop: ${[...loop, loop[0]].join(" -> ")}` };
  });
}

/** The loops of `graph` (Tarjan): components of more than one node, or a node importing itself. */
function stronglyConnected(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const loops = [];
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node)) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node).includes(node)) loops.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return loops;
}

/** One cycle inside a component, from its first file back to it (breadth-first: the shortest). */
function loopThrough(graph, component) {
  const inside = new Set(component);
  const start = component[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const to of graph.get(node)) {
      if (!inside.has(to)) continue;
      if (to === start) {
        const path = [node];
        while (previous.get(path[0]) !== null) path.unshift(previous.get(path[0]));
        return path;
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return component;
}

/** Loops among the table's own arrows (`may`): the layers, features included, must point one way. */
export function layerLoops(layers = LAYERS) {
  const graph = new Map(
    layers.map((layer) => [
      layer.name,
      layers
        .filter((other) => other !== layer && layer.may.some((name) => other.name === name || other.name.startsWith(`${name}/`)))
        .map((other) => other.name),
    ]),
  );
  return stronglyConnected(graph).map(
    (component) => `the layer table loops: ${[...loopThrough(graph, component), loopThrough(graph, component)[0]].join(" -> ")}`,
  );
}

// ---- The table in docs/architecture.md, printed from LAYERS so the doc cannot disagree with the check.

export const TABLE_DOC = "docs/architecture.md";
const TABLE_BEGIN = "<!-- layer table: printed by `node scripts/check-layers.mjs --write-table`; edit LAYERS, not this -->";
const TABLE_END = "<!-- end of layer table -->";

const code = (text) => `\`${text}\``;
const folder = (layer) => (layer.name.endsWith(".ts") ? code(layer.name) : code(`${layer.name}/`));

function mayImport(layer) {
  if (layer.types) {
    const typesOnly = (layer.typesOnly ?? []).map((name) => `${code(`${name}/`)} as types only`);
    return `only \`lib/**/*-types.ts\` files, ${[...layer.may.map(code), ...typesOnly].join(", ")}`;
  }
  const parts = [layer.may.length ? layer.may.map(code).join(", ") : "nothing else of this repository"];
  if (layer.packages) parts.push(`npm packages ${layer.packages.map(code).join(", ")} and node built-ins only`);
  return parts.join("; ");
}

/** LAYERS as the Markdown table of docs/architecture.md. */
export function layerTable(layers = LAYERS) {
  const row = (layer) =>
    `| ${folder(layer)} | ${layer.holds} | ${mayImport(layer)} | ${layer.public ? layer.public.map(code).join(", ") : "any"} |`;
  const rows = [];
  for (const layer of layers) {
    // The features share one base: printed once, above them, and each feature names only what it adds.
    if (layer.features && !rows.some((r) => r.startsWith("| `lib/features/<feature>/`")))
      rows.push(
        `| \`lib/features/<feature>/\` | every feature: its contract (zod), its zod-free values (\`*-types.ts\`), its reads, writes and runners, its routes declared once (\`routes.ts\`) | ${FEATURE_BASE.map(code).join(", ")} | any |`,
      );
    if (layer.features) {
      const adds = layer.features.map((name) => code(`lib/features/${name}`));
      rows.push(
        `| ${folder(layer)} | ${layer.holds} | the features' base${adds.length ? `, and ${adds.join(", ")}` : " only"} | any |`,
      );
    } else rows.push(row(layer));
  }
  return [
    "| folder | holds | may import (besides itself) | entry points others may import |",
    "| --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

function tableSpan(text) {
  const begin = text.indexOf(TABLE_BEGIN);
  const end = text.indexOf(TABLE_END);
  if (begin < 0 || end < begin) return undefined;
  return { start: begin + TABLE_BEGIN.length, end };
}

/** Why the doc's copy of the table is not LAYERS as printed now, or undefined when it is. */
export function staleLayerTable(root = ROOT) {
  const file = path.join(root, TABLE_DOC);
  if (!fs.existsSync(file)) return `${TABLE_DOC} is missing: it shows the layer table`;
  const text = fs.readFileSync(file, "utf8");
  const span = tableSpan(text);
  if (!span) return `${TABLE_DOC} lacks the layer table's markers (${TABLE_BEGIN} … ${TABLE_END})`;
  if (text.slice(span.start, span.end).trim() !== layerTable())
    return `${TABLE_DOC}'s layer table is stale: run node scripts/check-layers.mjs --write-table`;
  return undefined;
}

export function writeLayerTable(root = ROOT) {
  const file = path.join(root, TABLE_DOC);
  const text = fs.readFileSync(file, "utf8");
  const span = tableSpan(text);
  if (!span) throw new Error(`${TABLE_DOC} lacks the layer table's markers`);
  fs.writeFileSync(file, `${text.slice(0, span.start)}\n${layerTable()}\n${text.slice(span.end)}`);
}

function main() {
  // --root <dir>: check another tree (the layer test plants an upward import in a scratch copy).
  const at = process.argv.indexOf("--root");
  const root = at > 0 ? path.resolve(process.argv[at + 1]) : ROOT;
  if (process.argv.includes("--print-table")) {
    process.stdout.write(`${layerTable()}\n`);
    return;
  }
  if (process.argv.includes("--write-table")) {
    writeLayerTable(root);
    return;
  }
  const problems = checkLayers({ root });
  // The other half of the house's rule: only the library changes the library's table.
  const effectsOwned = reportEffectOwner({ root });
  const tableProblem = staleLayerTable(root);
  if (tableProblem) process.stderr.write(`layers: ${tableProblem}\n`);
  const tableLoops = layerLoops();
  for (const loop of tableLoops) process.stderr.write(`layers: ${loop}\n`);
  const key = (p) => `${p.from} -> ${p.to}`;
  const known = new Set(KNOWN_EXCEPTIONS);
  const fresh = problems.filter((p) => !known.has(key(p)));
  const stale = KNOWN_EXCEPTIONS.filter((k) => !problems.some((p) => key(p) === k));
  for (const p of fresh) process.stderr.write(`layers: ${p.from} imports ${p.to}: ${p.why}\n`);
  for (const k of stale)
    process.stderr.write(`layers: known exception no longer needed, remove it from scripts/check-layers.mjs: ${k}\n`);
  const knownCount = problems.length - fresh.length;
  if (fresh.length > 0 || stale.length > 0 || tableProblem || tableLoops.length > 0 || !effectsOwned) process.exit(1);
  process.stdout.write(
    `layers: every import follows the layout table, no import loops${knownCount ? ` (${knownCount} known exception(s) in the library folders)` : ""}; only lib/idempotency writes effects\n`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) main();
