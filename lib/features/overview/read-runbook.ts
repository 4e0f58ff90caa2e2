import fs from "node:fs/promises";
import path from "node:path";

const OPERATIONS_MD = path.resolve(process.cwd(), "docs/operations.md");

/**
 * The "### <name>" section of docs/operations.md: its Markdown, up to the next heading of level 1
 * to 3 (rendered by components/overview/runbook-markdown.tsx), or null when there is none.
 */
export async function readRunbook(name: string, file = OPERATIONS_MD): Promise<{ title: string; markdown: string } | null> {
  if (!/^[A-Za-z0-9]+$/.test(name)) return null;
  // turbopackIgnore: the runbook is read from the checkout at run time, not traced into the build.
  const text = await fs.readFile(/* turbopackIgnore: true */ file, "utf8").catch(() => "");
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.trim() === `### ${name}`);
  if (start === -1) return null;
  const body: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,3} /.test(line)) break;
    body.push(line);
  }
  return { title: name, markdown: body.join("\n").trim() };
}
