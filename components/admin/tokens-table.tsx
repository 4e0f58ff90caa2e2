"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { fetchJson } from "@/components/api/fetch-json";
import { useConsoleWritable } from "@/components/shell/console-mode";
import { type Column, DataTable } from "@/components/ui/data-table";
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

type TokenRow = TokensResponse["tokens"][number];

/** A token is named by its name and suffix; revoking it is the last column, never pushed out of view. */
function tokenColumns(writable: boolean): Column<TokenRow>[] {
  return [
    {
      id: "name",
      label: "Name",
      kind: "text",
      priority: 1,
      cell: (token) => (
        <>
          <Link href={`/audit?target=${encodeURIComponent(token.id)}`} title="This token's audit trail">
            {token.name}
          </Link>{" "}
          <span className="muted">…{token.suffix}</span>
        </>
      ),
    },
    { id: "role", label: "Role", kind: "id", cell: (token) => token.role },
    { id: "tenant", label: "Tenant", kind: "id", cell: (token) => token.tenantId ?? <span className="muted">platform</span> },
    { id: "state", label: "State", kind: "badge", cell: (token) => token.state },
    { id: "created", label: "Created", kind: "time", priority: 3, cell: (token) => formatUtc(token.createdAt) },
    { id: "expires", label: "Expires", kind: "time", cell: (token) => formatUtc(token.expiresAt, { empty: "never" }) },
    { id: "last-used", label: "Last used", kind: "time", cell: (token) => formatUtc(token.lastUsedAt, { empty: "never" }) },
    {
      id: "actions",
      label: "Actions",
      headingHidden: true,
      kind: "action",
      cell: (token) =>
        writable && token.state === "active" ? (
          <RevokeButton url={`/api/v1/tokens/${token.id}/revoke`} what={`token ${token.name}`} />
        ) : null,
    },
  ];
}

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
        <DataTable
          columns={tokenColumns(writable)}
          rows={query.data.tokens}
          rowKey={(token) => token.id}
          rowProps={(token) => ({ id: `token-${token.id}`, "data-token-id": token.id })}
          labelledBy="tokens-heading"
        />
      )}
      <AdminPager page={page} cursorKey="tokensCursor" nextCursor={query.data.nextCursor} noun="tokens" label="Token pages" />
    </section>
  );
}
