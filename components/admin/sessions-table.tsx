"use client";

import { useQuery } from "@tanstack/react-query";
import { fetchJson } from "@/components/api/fetch-json";
import { useConsoleWritable } from "@/components/shell/console-mode";
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
        <div className="table-scroll">
          <table className="data-table" aria-labelledby="sessions-heading">
            <thead>
              <tr>
                <th scope="col">Who</th>
                <th scope="col">Role</th>
                <th scope="col">Tenant</th>
                <th scope="col">Signed in with</th>
                <th scope="col">From</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last seen</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {query.data.sessions.map((session) => (
                <tr key={session.id} data-session-id={session.id}>
                  <td>{session.actor}</td>
                  <td>{session.role}</td>
                  <td>{session.tenantId ?? <span className="muted">platform</span>}</td>
                  <td>{SIGNED_IN_WITH[session.signedInWith] ?? session.signedInWith}</td>
                  <td>{session.clientIp ?? <span className="muted">unknown</span>}</td>
                  <td>{formatUtc(session.createdAt)}</td>
                  <td>{formatUtc(session.lastSeenAt)}</td>
                  <td>
                    {writable ? (
                      <RevokeButton url={`/api/v1/sessions/${session.id}/revoke`} what={`session of ${session.actor}`} />
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
