"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { fetchJson } from "@/components/api/fetch-json";
import { useConsoleWritable } from "@/components/shell/console-mode";
import { REFRESH_MS } from "@/components/ui/describe-api-error";
import { EmptyState } from "@/components/ui/empty-state";
import { ErrorState } from "@/components/ui/error-state";
import type { AdminPageParams } from "@/lib/features/tokens-and-sessions/admin-page-types";
import { ADMIN_QUERY_ROOT } from "@/lib/features/tokens-and-sessions/admin-types";
import type { TokensResponse } from "@/lib/features/tokens-and-sessions/contract";
import { formatUtc } from "@/lib/format";
import { AdminPager } from "./admin-pager";
import { CreateTokenForm } from "./create-token-form";
import { RevokeButton } from "./revoke-button";

const tokensQueryKey = (search: string) => [ADMIN_QUERY_ROOT, "tokens", search];

/**
 * Machine tokens of the admin's scope: name, role, tenant, expiry, last use; create and revoke. A
 * page at a time (`search` holds its cursor), the sessions table's place kept in its links.
 */
export function TokensTable({
  initial,
  search,
  platform,
  tenant,
  page,
}: {
  initial: TokensResponse;
  search: string;
  platform: boolean;
  tenant: string | null;
  page: AdminPageParams;
}) {
  const writable = useConsoleWritable();
  const query = useQuery({
    queryKey: tokensQueryKey(search),
    queryFn: ({ signal }) => fetchJson<TokensResponse>(`/api/v1/tokens${search ? `?${search}` : ""}`, signal),
    initialData: initial,
    refetchInterval: REFRESH_MS,
  });
  return (
    <section className="panel panel-flush" aria-labelledby="tokens-heading" data-testid="tokens">
      <div className="panel-header">
        <h2 id="tokens-heading">Machine tokens</h2>
        <span className="panel-meta">for workers, scripts and sign-in; the secret is shown once, at creation</span>
      </div>
      {writable ? <CreateTokenForm platform={platform} tenant={tenant} /> : null}
      {query.isError ? (
        <ErrorState title="Tokens could not be loaded" message={query.error.message} onRetry={() => void query.refetch()} />
      ) : query.data.tokens.length === 0 ? (
        <EmptyState title="No tokens">
          <p className="muted">Create one above, or with npm run token -- create.</p>
        </EmptyState>
      ) : (
        <div className="table-scroll">
          <table className="data-table" aria-labelledby="tokens-heading">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Tenant</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {query.data.tokens.map((token) => (
                <tr key={token.id} id={`token-${token.id}`} data-token-id={token.id}>
                  <td>
                    <Link href={`/audit?target=${encodeURIComponent(token.id)}`} title="This token's audit trail">
                      {token.name}
                    </Link>{" "}
                    <span className="muted">…{token.suffix}</span>
                  </td>
                  <td>{token.role}</td>
                  <td>{token.tenantId ?? <span className="muted">platform</span>}</td>
                  <td>{token.state}</td>
                  <td>{formatUtc(token.createdAt)}</td>
                  <td>{formatUtc(token.expiresAt, { empty: "never" })}</td>
                  <td>{formatUtc(token.lastUsedAt, { empty: "never" })}</td>
                  <td>
                    {writable && token.state === "active" ? (
                      <RevokeButton url={`/api/v1/tokens/${token.id}/revoke`} what={`token ${token.name}`} />
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <AdminPager page={page} cursorKey="tokensCursor" nextCursor={query.data.nextCursor} noun="tokens" label="Token pages" />
    </section>
  );
}
