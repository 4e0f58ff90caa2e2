import { PageHeader } from "@/components/ui/page-header";

export default function Loading() {
  return (
    <>
      <PageHeader title="Audit log" description="Every key read and every write, newest first." />
      <p role="status">Loading…</p>
    </>
  );
}
