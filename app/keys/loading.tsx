import { PageHeader } from "@/components/ui/page-header";

export default function Loading() {
  return (
    <>
      <PageHeader title="Keys" description="Look up an effect key: did it run twice?" />
      <p role="status">Loading…</p>
    </>
  );
}
