import Link from "next/link";
import type { ReactNode } from "react";
import Markdown, { type Components } from "react-markdown";
import { NAV_ITEMS } from "../shell/nav-items";

/**
 * An alert's runbook (its section of docs/operations.md) rendered from its Markdown: `code` as
 * code, links as links, and every console page the text names by its sidebar label ("the
 * Violations page", "On the Overview") linked to that page. Safe: raw HTML in the source is
 * dropped, never rendered, images are not loaded, and react-markdown's URL filter leaves out
 * `javascript:` and the like. The source stays plain Markdown, readable as a file: a link written
 * into it (`[failed effects](/effects?state=failed)`) is a link here too.
 */
export function RunbookMarkdown({ markdown }: { markdown: string }) {
  return (
    <Markdown skipHtml disallowedElements={["img"]} unwrapDisallowed remarkPlugins={[linkPageNames]} components={COMPONENTS}>
      {markdown}
    </Markdown>
  );
}

const COMPONENTS: Components = {
  a: ({ href, children }) => <RunbookLink href={href}>{children}</RunbookLink>,
};

/**
 * A console path through the router; another site in a new tab; a path relative to the Markdown
 * file (`reconciliation.md`, a document beside docs/operations.md in the repository) as its text
 * alone: the console does not serve the docs, and a relative link would resolve under
 * /overview/runbook/.
 */
function RunbookLink({ href, children }: { href: string | undefined; children: ReactNode }) {
  if (href?.startsWith("/") && !href.startsWith("//")) return <Link href={href}>{children}</Link>;
  if (href && /^https?:\/\//i.test(href))
    return (
      <a href={href} target="_blank" rel="noreferrer">
        {children}
      </a>
    );
  return <span title={href ? `docs/${href} in the repository` : undefined}>{children}</span>;
}

// ---- The page names, linked: a remark plugin over the Markdown syntax tree (mdast).

interface MdNode {
  type: string;
  value?: string;
  url?: string;
  children?: MdNode[];
}

/** Where a page name is not linked: inside a link already, a link definition, or a heading. */
const NOT_LINKED = new Set(["link", "linkReference", "definition", "heading"]);

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const PAGE_BY_NAME = new Map(NAV_ITEMS.map((item) => [item.label, item.href]));
/** The sidebar's labels as written there (capitalised: "keys" in a sentence is not the Keys page), longest first. */
const PAGE_NAME = new RegExp(
  `\\b(${[...PAGE_BY_NAME.keys()]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join("|")})\\b`,
  "g",
);

/** Splits a text node around the page names in it, each name becoming a link to its page. */
function withPageLinks(text: string): MdNode[] {
  const out: MdNode[] = [];
  let last = 0;
  for (const match of text.matchAll(PAGE_NAME)) {
    const name = match[0];
    const at = match.index ?? 0;
    if (at > last) out.push({ type: "text", value: text.slice(last, at) });
    out.push({ type: "link", url: PAGE_BY_NAME.get(name), children: [{ type: "text", value: name }] });
    last = at + name.length;
  }
  if (last === 0) return [{ type: "text", value: text }];
  if (last < text.length) out.push({ type: "text", value: text.slice(last) });
  return out;
}

function linkIn(node: MdNode): void {
  if (!node.children) return;
  node.children = node.children.flatMap((child) => {
    if (child.type === "text" && child.value !== undefined) return withPageLinks(child.value);
    if (!NOT_LINKED.has(child.type)) linkIn(child);
    return [child];
  });
}

/** The remark plugin: page names in the text (not in code, links or headings) become links. */
function linkPageNames() {
  return (tree: MdNode) => linkIn(tree);
}
