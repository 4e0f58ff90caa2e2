import { EmptyState } from "@/components/ui/empty-state";

/** What an admin page shows a signed-in viewer or operator: what it needs, and no data. */
export function AdminOnly({ page, role }: { page: string; role: string }) {
  return (
    <EmptyState title={`${page} is for admins`}>
      <p className="muted">
        You are signed in as {role === "operator" ? "an" : "a"} {role}; this page needs the admin role. Ask an admin of your
        tenant for a token with it.
      </p>
    </EmptyState>
  );
}
