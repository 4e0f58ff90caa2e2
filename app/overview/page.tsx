import type { Metadata } from "next";
import { Suspense } from "react";
import { OverviewSkeleton } from "@/components/overview/overview-skeleton";
import { OverviewView } from "@/components/overview/overview-view";
import { PageHeader } from "@/components/ui/page-header";

export const metadata: Metadata = { title: "Overview" };

export default function OverviewPage() {
  return (
    <>
      <PageHeader
        title="Overview"
        description="Effects claimed by your workers, duplicates suppressed, and unique violations no guard caught."
      />
      {/* The view reads ?window= on the client; the boundary keeps the header in the static HTML. */}
      <Suspense fallback={<OverviewSkeleton />}>
        <OverviewView />
      </Suspense>
    </>
  );
}
