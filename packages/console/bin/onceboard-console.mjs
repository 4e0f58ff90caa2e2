#!/usr/bin/env node
// The @onceboard/console command. The console itself (a prebuilt Next.js standalone server and
// the migrations) is in ../server; this file only checks the Node.js version before loading it.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`onceboard-console: Node.js 20.19 or newer is needed (this is ${process.versions.node})\n`);
  process.exit(1);
}
await import("../server/cli.mjs");
