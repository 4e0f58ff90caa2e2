import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { readRunbook } from "@/lib/features/overview/read-runbook";
import { RunbookMarkdown } from "./runbook-markdown";

/**
 * A runbook is its section of docs/operations.md rendered from Markdown: code as code (never a
 * literal backtick), the console's pages it names as links to them, and nothing of raw HTML.
 */
const render = (markdown: string) => renderToStaticMarkup(<RunbookMarkdown markdown={markdown} />);
const textOf = (html: string) => html.replace(/<[^>]+>/g, "");

describe("runbooks rendered from Markdown", () => {
  it("OnceboardUncaughtUniqueViolation: `constraint` as code, the Overview, Violations and Keys pages as links", async () => {
    const runbook = await readRunbook("OnceboardUncaughtUniqueViolation");
    if (!runbook) throw new Error("docs/operations.md has no OnceboardUncaughtUniqueViolation section");
    const html = render(runbook.markdown);
    expect(html).toContain("<code>constraint</code>");
    expect(textOf(html)).not.toContain("`");
    expect(html).toContain('<a href="/violations">Violations</a>');
    expect(html).toContain('<a href="/keys">Keys</a>');
    expect(html).toContain('<a href="/overview">Overview</a>');
    // Paragraphs, as written.
    expect(html.match(/<p>/g)?.length).toBeGreaterThanOrEqual(1);
  });

  it("every alert's runbook renders without a backtick or a Markdown link left as text", async () => {
    for (const name of [
      "OnceboardRedeliveriesNotSuppressed",
      "OnceboardRollupFlushFailing",
      "OnceboardProviderDuplicateCharge",
      "OnceboardReconcileFailing",
    ]) {
      const runbook = await readRunbook(name);
      const text = textOf(render(runbook?.markdown ?? ""));
      expect(text, name).not.toMatch(/`|\]\(/);
      expect(text.length, name).toBeGreaterThan(50);
    }
  });

  it("links a page name only where it is prose: not in code, not inside a link, not in lower case", () => {
    const html = render(
      "Open the Reconciliation page, then `Violations` (code), [the Keys page](/keys?q=x), and keys in general. Delivery gaps too.",
    );
    expect(html).toContain('<a href="/reconciliation">Reconciliation</a>');
    expect(html).toContain("<code>Violations</code>");
    expect(html).not.toContain('href="/violations"');
    // A link written in the source stays that link, its text not split again.
    expect(html).toContain('<a href="/keys?q=x">the Keys page</a>');
    expect(html.match(/href="\/keys/g)).toHaveLength(1);
    expect(html).toContain('<a href="/gaps">Delivery gaps</a>');
  });

  it("renders no raw HTML, no script URL and no image; another site opens apart, a file beside the docs is its name", () => {
    const html = render(
      [
        'Before <script>alert(1)</script> after <b onclick="alert(2)">bold</b>.',
        "",
        "<div>block</div>",
        "",
        "[click](javascript:alert(3)) ![tracker](https://example.com/t.png) [Stripe](https://dashboard.stripe.com/payments)",
        "see [reconciliation.md](reconciliation.md)",
      ].join("\n"),
    );
    // The tags are dropped; what stood between them is plain text.
    expect(html).not.toMatch(/<script|<b |<div|onclick|<img|javascript:/i);
    expect(html).toContain("<p>Before alert(1) after bold.</p>");
    expect(html).toContain("<span>click</span>");
    expect(html).toContain('<a href="https://dashboard.stripe.com/payments" target="_blank" rel="noreferrer">Stripe</a>');
    expect(html).toContain('<span title="docs/reconciliation.md in the repository">reconciliation.md</span>');
    expect(html).not.toContain('href="reconciliation.md"');
  });
});
