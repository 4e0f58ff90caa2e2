import { PageHeader } from "@/components/ui/page-header";

export default function Loading() {
  return (
    <>
      <PageHeader
        title="Effects by state"
        description="Every effect state with its count for the filter; open one to list its effects."
      />
      <p role="status">Loading…</p>
    </>
  );
}
