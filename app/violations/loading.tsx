import { PageHeader } from "@/components/ui/page-header";

export default function Loading() {
  return (
    <>
      <PageHeader title="Uncaught violations" description="Every affected key of an uncaught unique violation." />
      <p role="status">Loading…</p>
    </>
  );
}
