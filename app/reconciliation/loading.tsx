import { PageHeader } from "@/components/ui/page-header";

export default function Loading() {
  return (
    <>
      <PageHeader title="Reconciliation" description="Onceboard's records against the provider's own." />
      <p role="status">Loading…</p>
    </>
  );
}
