import Link from "next/link";
import { EmptyState } from "@/components/ui/empty-state";

export default function NotFound() {
  return (
    <EmptyState title="Page not found">
      <p>There is no console page at this address.</p>
      <p>
        <Link href="/overview" className="button">
          Go to the Overview
        </Link>
      </p>
    </EmptyState>
  );
}
