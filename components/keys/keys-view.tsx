"use client";

import { useQuery } from "@tanstack/react-query";
import Form from "next/form";
import Link from "next/link";
import { ApiClientError, fetchJson } from "@/components/api/fetch-json";
import { EmptyState } from "@/components/ui/empty-state";
import { ErrorState } from "@/components/ui/error-state";
import type { Role } from "@/lib/auth/auth-types";
import { EFFECT_STATUSES, type EffectSearchResponse } from "@/lib/console/effects-types";
import { type KeysViewParams, keysQueryString, keysSearchQueryKey, keysSearchUrl } from "@/lib/console/keys-types";
import { formatUtc } from "@/lib/format";
import { KeyDetail } from "./key-detail";
import { StatusBadge } from "./status-badge";

export type { KeysViewParams };

/** The Keys page: search box (and tenant picker for platform tokens), results, the selected key's detail. */
export function KeysView({
  params,
  session,
}: {
  params: KeysViewParams;
  session: { role: Role; tenantId: string | null; actor: string };
}) {
  const platform = session.tenantId === null;
  const tenant = params.tenant;
  // The server prefetched under the same key (app/keys/page.tsx): the first HTML has the results.
  const searchUrl = keysSearchUrl(params, platform);
  const search = useQuery({
    queryKey: keysSearchQueryKey(searchUrl),
    queryFn: ({ signal }) => fetchJson<EffectSearchResponse>(searchUrl, signal),
    enabled: tenant !== undefined,
    refetchInterval: 15_000,
  });
  const linkTo = (key?: string) =>
    `/keys?${keysQueryString({ tenant: platform ? tenant : undefined, q: params.q, status: params.status, jobType: params.jobType, key })}`;

  return (
    <div className="keys-layout">
      <Form action="/keys" className="keys-search" role="search" aria-label="Search keys">
        {platform ? (
          <label className="keys-field">
            <span>Tenant</span>
            <input name="tenant" defaultValue={tenant ?? ""} required className="input" placeholder="acme" list="keys-tenants" />
          </label>
        ) : (
          <span className="keys-field muted">Tenant {session.tenantId}</span>
        )}
        <label className="keys-field keys-q">
          <span>Key or fragment</span>
          <input name="q" type="search" defaultValue={params.q ?? ""} className="input" placeholder="order id, e.g. ord-123" />
        </label>
        <label className="keys-field">
          <span>Status</span>
          <select name="status" defaultValue={params.status ?? ""} className="input">
            <option value="">any</option>
            {EFFECT_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace("_", " ")}
              </option>
            ))}
          </select>
        </label>
        <label className="keys-field">
          <span>Job type</span>
          <input name="jobType" defaultValue={params.jobType ?? ""} className="input" placeholder="any" />
        </label>
        <button type="submit" className="button">
          Search
        </button>
      </Form>

      {tenant === undefined ? (
        <EmptyState title="Pick a tenant">
          <p>A platform token spans tenants: name the tenant whose keys to search.</p>
        </EmptyState>
      ) : (
        <div className="keys-columns">
          <section className="panel panel-flush keys-results" aria-labelledby="keys-results-heading">
            <div className="panel-header">
              <h2 id="keys-results-heading">Results</h2>
              <span className="panel-meta">
                {search.data ? `${search.data.effects.length}${search.data.nextCursor ? "+" : ""} keys, newest first` : ""}
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
              <p className="panel-body">No key of tenant {tenant} matches.</p>
            ) : (
              <div className="table-scroll">
                <table className="data-table" aria-labelledby="keys-results-heading">
                  <thead>
                    <tr>
                      <th scope="col">Key · job type</th>
                      <th scope="col">Status</th>
                      <th scope="col" className="num" title="Duplicates suppressed">
                        Dup.
                      </th>
                      <th scope="col">Created (UTC)</th>
                    </tr>
                  </thead>
                  <tbody>
                    {search.data.effects.map((e) => (
                      <tr key={e.key} aria-selected={e.key === params.key} data-testid="key-row">
                        <th scope="row">
                          <Link href={linkTo(e.key)} className="key-link">
                            {e.key}
                          </Link>
                          <span className="key-job">{e.jobType}</span>
                        </th>
                        <td>
                          <StatusBadge status={e.status} />
                        </td>
                        <td className="num">{e.duplicateCount}</td>
                        <td>{formatUtc(e.createdAt, { empty: "–" }).replace(" UTC", "")}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
          {params.key ? (
            <KeyDetail tenant={tenant} platform={platform} effectKey={params.key} role={session.role} linkTo={linkTo} />
          ) : null}
        </div>
      )}
    </div>
  );
}
