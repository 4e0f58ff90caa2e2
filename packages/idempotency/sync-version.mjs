#!/usr/bin/env node
// Part of `npm run version:packages`: after `changeset version` has bumped
// packages/idempotency/package.json, carries its version into lib/idempotency/version.ts, where
// migrate() reads it (the library's source cannot read a manifest that is not in its package).
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");
const FILE = path.join(ROOT, "lib/idempotency/version.ts");
const { version } = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, "package.json"), "utf8"));
const source = fs.readFileSync(FILE, "utf8");
const pattern = /export const LIBRARY_VERSION: string = "[^"]*";/;
if (!pattern.test(source)) throw new Error("sync-version: lib/idempotency/version.ts has no LIBRARY_VERSION line to update");
fs.writeFileSync(FILE, source.replace(pattern, `export const LIBRARY_VERSION: string = "${version}";`));
process.stderr.write(`sync-version: LIBRARY_VERSION = ${version}\n`);
