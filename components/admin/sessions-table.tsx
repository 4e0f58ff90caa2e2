"use client";

import { useQuery } from "@tanstack/react-query";
import { fetchJson } from "@/components/api/fetch-json";
import { useConsoleWritable } from "@/components/shell/console-mode";
import { type Column, DataTable } from "@/components/ui/data-table";
import { REFRESH_MS } from "@/components/ui/describe-api-error";
import { EmptyState } from "@/components/ui/empty-state";
import { ErrorState } from "@/components/ui/error-state";
import type { AdminPageParams } from "@/lib/features/tokens-and-sessions/admin-page-types";
import { ADMIN_QUERY_ROOT } from "@/lib/features/tokens-and-sessions/admin-types";
import type { SessionsResponse } from "@/lib/features/tokens-and-sessions/contract";
import { formatUtc } from "@/lib/format";
import { AdminPager } from "./admin-pager";
import { RevokeButton } from "./revoke-button";

const SIGNED_IN_WITH: Record<string, string> = { token: "token secret", link: "one-time link", oidc: "single sign-on" };

type SessionRow = SessionsResponse["sessions"][number];

/** A session is named by who holds it; revoking it is the last column, never pushed out of view. */
function sessionColumns(writable: boolean): Column<SessionRow>[] {
  return [
    { id: "who", label: "Who", kind: "text", priority: 1, cell: (session) => session.actor },
    { id: "role", label: "Role", kind: "id", cell: (session) => session.role },
    { id: "tenant", label: "Tenant", kind: "id", cell: (session) => session.tenantId ?? <span className="muted">platform</span> },
    {
      id: "signed-in-with",
      label: "Signed in with",
      kind: "text",
      priority: 3,
      cell: (session) => SIGNED_IN_WITH[session.signedInWith] ?? session.signedInWith,
    },
    {
      id: "from",
      label: "From",
      kind: "id",
      priority: 3,
      cell: (session) => session.clientIp ?? <span className="muted">unknown</span>,
    },
    { id: "signed-in", label: "Signed in", kind: "time", priority: 3, cell: (session) => formatUtc(session.createdAt) },
    { id: "last-seen", label: "Last seen", kind: "time", cell: (session) => formatUtc(session.lastSeenAt) },
    {
      id: "actions",
      label: "Actions",
      headingHidden: true,
      kind: "action",
      cell: (session) =>
        writable ? <RevokeButton url={`/api/v1/sessions/${session.id}/revoke`} what={`session of ${session.actor}`} /> : null,
    },
  ];
}

/**
 * Live console sessions of the admin's scope: who, how signed in, from where, last seen; revoke. A
 * page at a time (`search` holds its cursor), the tokens table's place kept in its links.
 */
export function SessionsTable({ initial, search, page }: { initial: SessionsResponse; search: string; page: AdminPageParams }) {
  const writable = useConsoleWritable();
  const query = useQuery({
    queryKey: [ADMIN_QUERY_ROOT, "sessions", search],
    queryFn: ({ signal }) => fetchJson<SessionsResponse>(`/api/v1/sessions${search ? `?${search}` : ""}`, signal),
    initialData: initial,
    refetchInterval: REFRESH_MS,
  });
  return (
    <section className="panel panel-flush" aria-labelledby="sessions-heading" data-testid="sessions">
      <div className="panel-header">
        <h2 id="sessions-heading">Live console sessions</h2>
        <span className="panel-meta">revoking one signs it out on its next request</span>
      </div>
      {query.isError ? (
        <ErrorState title="Sessions could not be loaded" message={query.error.message} onRetry={() => void query.refetch()} />
      ) : query.data.sessions.length === 0 ? (
        <EmptyState title="No live sessions">
          <p className="muted">Nobody is signed in to the console with a token of this scope.</p>
        </EmptyState>
      ) : (
        <DataTable
          columns={sessionColumns(writable)}
          rows={query.data.sessions}
          rowKey={(session) => session.id}
          rowProps={(session) => ({ "data-session-id": session.id })}
          labelledBy="sessions-heading"
        />
      )}
      <AdminPager
        page={page}
        cursorKey="sessionsCursor"
        nextCursor={query.data.nextCursor}
        noun="sessions"
        label="Session pages"
      />
    </section>
  );
}
