import { PageHeader } from "@/components/ui/page-header";

export default function Loading() {
  return (
    <>
      <PageHeader title="Delivery gaps" />
      <p role="status" aria-busy="true">
        Loading delivery gaps…
      </p>
    </>
  );
}
