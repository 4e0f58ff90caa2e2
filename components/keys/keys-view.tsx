"use client";

import { useQuery } from "@tanstack/react-query";
import Form from "next/form";
import Link from "next/link";
import { ApiClientError, fetchJson } from "@/components/api/fetch-json";
import { type Column, DataTable } from "@/components/ui/data-table";
import { ErrorState } from "@/components/ui/error-state";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { UnknownOption } from "@/components/ui/unknown-option";
import type { InvalidPageQuery } from "@/lib/api/page-query-types";
import type { Role } from "@/lib/auth/auth-types";
import type { EffectSearchResponse } from "@/lib/features/keys-and-effects/contract";
import { CROSS_TENANT_SEARCH_DAYS, EFFECT_STATUSES } from "@/lib/features/keys-and-effects/effects-types";
import {
  type KeysViewParams,
  keysQueryString,
  keysSearchQueryKey,
  keysSearchUrl,
} from "@/lib/features/keys-and-effects/keys-types";
import { formatCount, formatCountOf, formatUtc } from "@/lib/format";
import { BulkReleaseHint } from "./bulk-release-hint";
import { BulkReleasePanel } from "./bulk-release-panel";
import { KeyDetail } from "./key-detail";
import { StatusBadge } from "./status-badge";

export type { KeysViewParams };

type FoundEffect = EffectSearchResponse["effects"][number];

/** The results' columns: the key names the row; the tenant only when the search spans every tenant. */
function resultColumns(everyTenant: boolean, linkTo: (key: string, tenant: string) => string): Column<FoundEffect>[] {
  return [
    {
      id: "key",
      label: "Key · job type",
      kind: "key",
      priority: 1,
      cell: (e) => (
        <>
          <Link href={linkTo(e.key, e.tenant)} className="key-link">
            {e.key}
          </Link>
          <span className="key-job">{e.jobType}</span>
        </>
      ),
    },
    ...(everyTenant
      ? [
          {
            id: "tenant",
            label: "Tenant",
            kind: "id",
            cell: (e) => e.tenant,
            cellProps: () => ({ "data-testid": "key-tenant" }),
          } satisfies Column<FoundEffect>,
        ]
      : []),
    { id: "status", label: "Status", kind: "badge", cell: (e) => <StatusBadge status={e.status} stuck={e.stuck} /> },
    {
      id: "duplicates",
      label: "Duplicates suppressed",
      heading: "Dup.",
      headingTitle: "Duplicates suppressed",
      kind: "number",
      cell: (e) => formatCount(e.duplicateCount),
    },
    {
      id: "created",
      label: "Created (UTC)",
      kind: "time",
      cell: (e) => formatUtc(e.createdAt, { empty: "–" }).replace(" UTC", ""),
    },
  ];
}

/**
 * The Keys page: search box (and tenant field for platform tokens: empty searches every tenant),
 * results, the selected key's detail. `invalid`: the URL did not parse; the form keeps what was
 * typed and the error stands beside it, in place of the results.
 */
export function KeysView({
  params,
  session,
  invalid,
}: {
  params: KeysViewParams;
  session: { role: Role; tenantId: string | null; actor: string };
  invalid?: InvalidPageQuery;
}) {
  const platform = session.tenantId === null;
  const tenant = params.tenant;
  const shown = invalid?.typed ?? (params as Record<string, string | undefined>);
  // The server prefetched under the same key (app/keys/page.tsx): the first HTML has the results.
  const searchUrl = keysSearchUrl(params, platform);
  const search = useQuery({
    queryKey: keysSearchQueryKey(searchUrl),
    queryFn: ({ signal }) => fetchJson<EffectSearchResponse>(searchUrl, signal),
    enabled: invalid === undefined,
    refetchInterval: 15_000,
  });
  // Opening a key found across tenants names its tenant: the key's detail is one tenant's (and the
  // results become that tenant's, from their newest: a cursor belongs to the search that made it).
  const linkTo = (key?: string, keyTenant = tenant) =>
    `/keys?${keysQueryString({
      tenant: platform ? keyTenant : undefined,
      q: params.q,
      status: params.status,
      jobType: params.jobType,
      cursor: keyTenant === tenant ? params.cursor : undefined,
      key,
    })}`;
  // The next page keeps the search; no key is open on it.
  const pageLink = (cursor?: string) =>
    `/keys?${keysQueryString({ tenant: platform ? tenant : undefined, q: params.q, status: params.status, jobType: params.jobType, cursor })}`;
  const everyTenant = search.data?.tenant === null;
  // The results take the page's width; a key's detail, once open, takes half of it beside them.
  const detailOpen = Boolean(params.key) && tenant !== undefined;

  return (
    <div className="keys-layout">
      <Form action="/keys" className="keys-search" role="search" aria-label="Search keys">
        {platform ? (
          <label className="keys-field">
            <span>Tenant</span>
            <input
              name="tenant"
              defaultValue={shown.tenant ?? ""}
              className="input"
              placeholder="every tenant"
              list="keys-tenants"
            />
          </label>
        ) : (
          <span className="keys-field muted">Tenant {session.tenantId}</span>
        )}
        <label className="keys-field keys-q">
          <span>Key or fragment</span>
          <input name="q" type="search" defaultValue={shown.q ?? ""} className="input" placeholder="order id, e.g. ord-123" />
        </label>
        <label className="keys-field">
          <span>Status</span>
          <select name="status" defaultValue={shown.status ?? ""} className="input">
            <option value="">any</option>
            <UnknownOption value={shown.status} choices={EFFECT_STATUSES} />
            {EFFECT_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace("_", " ")}
              </option>
            ))}
          </select>
        </label>
        <label className="keys-field">
          <span>Job type</span>
          <input name="jobType" defaultValue={shown.jobType ?? ""} className="input" placeholder="any" />
        </label>
        <button type="submit" className="button">
          Search
        </button>
      </Form>

      {invalid ? (
        <InvalidQueryAlert invalid={invalid} hint="Change it above and search again." />
      ) : (
        <>
          {session.role === "viewer" ? null : tenant !== undefined ? (
            <BulkReleasePanel
              key={`${tenant}\u0000${params.q ?? ""}\u0000${params.jobType ?? ""}`}
              tenant={tenant}
              platform={platform}
              q={params.q}
              jobType={params.jobType}
            />
          ) : (
            <BulkReleaseHint where="in the search above" />
          )}
          <div className={detailOpen ? "keys-columns keys-columns-open" : "keys-columns"}>
            <section className="panel panel-flush keys-results" aria-labelledby="keys-results-heading">
              <div className="panel-header">
                <h2 id="keys-results-heading">Results</h2>
                <span className="panel-meta">
                  {search.data
                    ? `${formatCountOf(search.data.effects.length, "key")}${params.cursor ? " older than the previous page" : ""}${search.data.nextCursor ? ", more on the next page" : ""}, newest first${everyTenant ? `, every tenant, last ${CROSS_TENANT_SEARCH_DAYS} days` : ""}`
                    : ""}
                </span>
              </div>
              {search.isPending ? (
                <p role="status" className="panel-body">
                  Searching…
                </p>
              ) : search.isError ? (
                <ErrorState
                  title="The search failed"
                  message={search.error.message}
                  code={search.error instanceof ApiClientError ? search.error.code : undefined}
                  onRetry={() => void search.refetch()}
                  retrying={search.isFetching}
                />
              ) : search.data.effects.length === 0 ? (
                <p className="panel-body">
                  {everyTenant
                    ? `No key of any tenant created in the last ${CROSS_TENANT_SEARCH_DAYS} days matches: name a tenant to search 90 days.`
                    : `No key of tenant ${search.data.tenant} matches.`}
                </p>
              ) : (
                <DataTable
                  columns={resultColumns(everyTenant, linkTo)}
                  rows={search.data.effects}
                  rowKey={(e) => `${e.tenant}|${e.key}`}
                  rowProps={(e) => ({ "aria-selected": e.key === params.key && e.tenant === tenant, "data-testid": "key-row" })}
                  labelledBy="keys-results-heading"
                />
              )}
              {search.data && (params.cursor || search.data.nextCursor) ? (
                <nav className="panel-body pager" aria-label="Result pages">
                  {params.cursor ? (
                    <Link href={pageLink()} data-testid="keys-newest" className="button">
                      Newest keys
                    </Link>
                  ) : null}
                  {search.data.nextCursor ? (
                    <Link href={pageLink(search.data.nextCursor)} data-testid="keys-next" className="button">
                      Next page
                    </Link>
                  ) : null}
                </nav>
              ) : null}
            </section>
            {params.key && tenant !== undefined ? (
              <KeyDetail tenant={tenant} platform={platform} effectKey={params.key} role={session.role} linkTo={linkTo} />
            ) : null}
          </div>
        </>
      )}
    </div>
  );
}
