import { PageHeader } from "@/components/ui/page-header";

export default function Loading() {
  return (
    <>
      <PageHeader title="Tokens & sessions" description="Machine tokens and who is signed in to the console." />
      <p role="status">Loading…</p>
    </>
  );
}
