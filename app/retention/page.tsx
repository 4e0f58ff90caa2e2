import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { Metadata } from "next";
import { RETENTION_QUERY_KEY, RetentionPanel } from "@/components/retention/retention-panel";
import { PageHeader } from "@/components/ui/page-header";
import { requirePageSession } from "@/lib/auth/page-session";
import { getRetention } from "@/lib/retention/get-retention";

export const metadata: Metadata = { title: "Retention" };
export const dynamic = "force-dynamic";

export default async function RetentionPage() {
  const principal = await requirePageSession("viewer");
  const queryClient = new QueryClient();
  // Prefetched on the server; a failure here is left to the client, which shows the error state and retries.
  await queryClient.prefetchQuery({ queryKey: RETENTION_QUERY_KEY, queryFn: () => getRetention() }).catch(() => {});
  const canApply = principal.role === "admin" && principal.tenantId === null;
  return (
    <>
      <PageHeader
        title="Retention"
        description="Effects partitions premade ahead and expired ones detached and dropped; what keeps each one, and every maintenance run."
      />
      <HydrationBoundary state={dehydrate(queryClient)}>
        <RetentionPanel canApply={canApply} />
      </HydrationBoundary>
    </>
  );
}
