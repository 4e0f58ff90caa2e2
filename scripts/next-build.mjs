// `npm run build`'s `next build`, its output passed through as it comes. A build whose Edge bundle
// (Next.js builds instrumentation.ts and proxy.ts for the Edge runtime too) reaches a Node.js API
// fails here: Next.js only warns, once per use, and the code would throw on that runtime.
import { spawn } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";

const EDGE_WARNING = /A Node\.js API is used \(([^)]*)\) which is not supported in the Edge Runtime/;
const LOCATION = /^\.?\/?(\S+:\d+:\d+)$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences of Next.js's colours
const COLOUR = /\x1b\[[0-9;]*m/g;

/** "<file:line:col> (<API>)" for each Edge-runtime warning in a build's output, in order. */
export function edgeRuntimeWarnings(output) {
  const lines = output.replace(COLOUR, "").split("\n");
  const found = [];
  for (const [i, line] of lines.entries()) {
    const warning = EDGE_WARNING.exec(line);
    if (!warning) continue;
    const location = LOCATION.exec((lines[i - 1] ?? "").trim());
    found.push(`${location ? location[1] : "(no location)"} (${warning[1]})`);
  }
  return found;
}

async function main() {
  const root = path.resolve(import.meta.dirname, "..");
  const child = spawn(path.join(root, "node_modules", ".bin", "next"), ["build"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
    process.stdout.write(chunk);
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
    process.stderr.write(chunk);
  });
  const code = await new Promise((resolve) => child.on("close", resolve));
  if (code !== 0) process.exit(code ?? 1);
  const warnings = edgeRuntimeWarnings(output);
  if (warnings.length > 0) {
    process.stderr.write(
      `\nonceboard: the Edge build reaches Node.js APIs in ${warnings.length} place(s); import Node.js-only code only ` +
        `inside a check that NEXT_RUNTIME is "nodejs" (instrumentation.ts shows how):\n${warnings.map((w) => `  ${w}`).join("\n")}\n`,
    );
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
