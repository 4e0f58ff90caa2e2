import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { RunbookMarkdown } from "@/components/overview/runbook-markdown";
import { PageHeader } from "@/components/ui/page-header";
import { readRunbook } from "@/lib/features/overview/read-runbook";

export const metadata: Metadata = { title: "Runbook" };

/**
 * An alert's runbook: its section of docs/operations.md ("### <alert>"), rendered from its Markdown
 * with links to the console's pages it names, served by the console so the link works anywhere.
 */
export default async function RunbookPage({ params }: { params: Promise<{ alert: string }> }) {
  const { alert } = await params;
  const section = await readRunbook(decodedOrNull(alert) ?? "");
  if (!section) notFound();
  return (
    <>
      <PageHeader title={section.title} description="From docs/operations.md" />
      <article className="panel runbook" data-testid="runbook">
        <RunbookMarkdown markdown={section.markdown} />
      </article>
      <p>
        <Link href="/overview">Back to the Overview</Link>
      </p>
    </>
  );
}

/** The segment decoded once more (links encode the alert's name), or null when it is not valid percent-encoded UTF-8: no runbook has that name. */
function decodedOrNull(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
