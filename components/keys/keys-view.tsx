"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Form from "next/form";
import Link from "next/link";
import { useState } from "react";
import { ApiClientError, fetchJson, postJson } from "@/components/api/fetch-json";
import { useConsoleWritable } from "@/components/shell/console-mode";
import { EmptyState, ErrorState } from "@/components/ui/states";
import type { Role } from "@/lib/auth/auth-types";
import {
  EFFECT_STATUSES,
  type EffectDetail,
  type EffectSearchResponse,
  type EffectStatus,
  type ReleaseResponse,
} from "@/lib/console/effects-types";
import {
  KEYS_SEARCH_QUERY_ROOT,
  type KeysViewParams,
  keyDetailQueryKey,
  keyDetailUrl,
  keysQueryString,
  keysSearchQueryKey,
  keysSearchUrl,
} from "@/lib/console/keys-types";
import { OVERVIEW_QUERY_ROOT } from "@/lib/console/overview-types";
import { formatUtc } from "@/lib/format";
import { BulkReleasePanel } from "./bulk-release-panel";

export type { KeysViewParams };

const STATUS_TONE: Record<EffectStatus, "success" | "warning" | "danger" | undefined> = {
  completed: "success",
  in_progress: "warning",
  failed: "danger",
  abandoned: "danger",
};

export function StatusBadge({ status, stuck }: { status: EffectStatus; stuck?: boolean }) {
  return (
    <span className="badge status-badge" data-tone={stuck ? "danger" : STATUS_TONE[status]} data-testid="status-badge">
      {stuck ? "stuck" : status.replace("_", " ")}
    </span>
  );
}

function time(iso: string | null): string {
  return formatUtc(iso, { empty: "–" });
}

/** "2026-11-21 08:37:44": the results column is headed UTC, and a narrow panel keeps every column in view. */
function shortTime(iso: string): string {
  return iso.slice(0, 19).replace("T", " ");
}

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
        <>
          {session.role !== "viewer" ? (
            <BulkReleasePanel
              key={`${tenant}\u0000${params.q ?? ""}\u0000${params.jobType ?? ""}`}
              tenant={tenant}
              platform={platform}
              q={params.q}
              jobType={params.jobType}
            />
          ) : null}
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
                          <td>{shortTime(e.createdAt)}</td>
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
        </>
      )}
    </div>
  );
}

function KeyDetail({
  tenant,
  platform,
  effectKey,
  role,
  linkTo,
}: {
  tenant: string;
  platform: boolean;
  effectKey: string;
  role: Role;
  linkTo: (key?: string) => string;
}) {
  const url = keyDetailUrl(tenant, effectKey, platform);
  const writable = useConsoleWritable();
  const detail = useQuery({
    queryKey: keyDetailQueryKey(url),
    queryFn: ({ signal }) => fetchJson<EffectDetail>(url, signal),
    refetchInterval: 10_000,
  });
  if (detail.isPending) return <p role="status">Loading {effectKey}…</p>;
  if (detail.isError) {
    const notFound = detail.error instanceof ApiClientError && detail.error.status === 404;
    return notFound ? (
      <EmptyState title="No such key">
        <p>
          Tenant {tenant} has no effect <code>{effectKey}</code> (it may have been pruned by retention).
        </p>
      </EmptyState>
    ) : (
      <ErrorState title="The key failed to load" message={detail.error.message} onRetry={() => void detail.refetch()} />
    );
  }
  const e = detail.data;
  return (
    <section className="panel key-detail" aria-labelledby="key-detail-heading" data-testid="key-detail">
      <div className="panel-header">
        <h2 id="key-detail-heading" className="key-title">
          {e.key} <StatusBadge status={e.status} stuck={e.stuck} />
        </h2>
      </div>
      <div className="panel-body">
        <p className="verdict" data-testid="verdict">
          {e.verdict}
        </p>
        <dl className="key-facts">
          <dt>Job type</dt>
          <dd>{e.jobType}</dd>
          <dt>Policy</dt>
          <dd>{e.policy}</dd>
          <dt>Attempts</dt>
          <dd>{e.attempts}</dd>
          <dt>Duplicates</dt>
          <dd>
            {e.duplicateCount}
            {e.lastDuplicateAt ? ` (last ${time(e.lastDuplicateAt)})` : ""}
          </dd>
          <dt>Provider key</dt>
          <dd>
            <code>{e.providerKey}</code>
          </dd>
          <dt>First message</dt>
          <dd>
            <code>{e.firstMessageId ?? "–"}</code>
          </dd>
          <dt>Last message</dt>
          <dd>
            <code>{e.lastMessageId ?? "–"}</code>
          </dd>
          <dt>Created</dt>
          <dd>{time(e.createdAt)}</dd>
          <dt>Completed</dt>
          <dd>{time(e.completedAt)}</dd>
          {e.status === "in_progress" ? (
            <>
              <dt>Owner</dt>
              <dd>{e.owner ?? "–"}</dd>
              <dt>Lease until</dt>
              <dd>{time(e.leaseUntil)}</dd>
            </>
          ) : null}
          {e.error ? (
            <>
              <dt>Error</dt>
              <dd>{e.error}</dd>
            </>
          ) : null}
        </dl>

        <h3>The job's steps</h3>
        <div className="steps" data-testid="steps">
          {e.steps.map((s) => (
            <Link key={s.key} href={linkTo(s.key)} className="step" aria-current={s.key === e.key ? "true" : undefined}>
              <span className="step-key">{s.key}</span>
              <StatusBadge status={s.status} />
              <span className="muted">
                {s.jobType} · attempt {s.attempt} · {s.duplicateCount} dup
              </span>
            </Link>
          ))}
        </div>

        <h3>Outcome</h3>
        <pre className="outcome" data-testid="outcome">
          {JSON.stringify(e.outcome, null, 2)}
        </pre>

        <h3>Uncaught violations</h3>
        {e.violations.length === 0 ? (
          <p className="muted">None recorded for this key.</p>
        ) : (
          <ul data-testid="key-violations">
            {e.violations.map((v) => (
              <li key={v.id} data-testid="key-violation">
                {v.constraint} ({v.jobType}) at {time(v.occurredAt)}
                {v.messageId ? <span className="muted"> · message {v.messageId}</span> : null}
                {v.message ? <span className="muted"> · {v.message}</span> : null}
              </li>
            ))}
          </ul>
        )}

        {role !== "viewer" && writable && e.status === "in_progress" ? (
          <ReleaseButton url={url.replace(/(\?|$)/, "/release$1")} effectKey={e.key} />
        ) : null}
      </div>
    </section>
  );
}

function ReleaseButton({ url, effectKey }: { url: string; effectKey: string }) {
  const [confirming, setConfirming] = useState(false);
  const client = useQueryClient();
  const release = useMutation({
    mutationFn: () => postJson<ReleaseResponse>(url),
    // A release changes this key, the searches listing it and the Overview's stuck claims; nothing else.
    onSettled: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: keyDetailQueryKey(url) }),
        client.invalidateQueries({ queryKey: [KEYS_SEARCH_QUERY_ROOT] }),
        client.invalidateQueries({ queryKey: [OVERVIEW_QUERY_ROOT] }),
      ]),
  });
  return (
    <div className="release" data-testid="release">
      {release.isSuccess ? (
        <p role="status">{release.data.message}</p>
      ) : release.isError ? (
        <p role="alert" className="login-error">
          {release.error.message}
        </p>
      ) : null}
      {!confirming ? (
        <button type="button" className="button" onClick={() => setConfirming(true)}>
          Release claim…
        </button>
      ) : (
        <div role="alertdialog" aria-label="Confirm release" className="release-confirm">
          <p>
            Release <code>{effectKey}</code>? The next delivery runs it again (attempt + 1). Do this only if its worker is gone.
          </p>
          <button
            type="button"
            className="button"
            onClick={() => {
              setConfirming(false);
              release.mutate();
            }}
          >
            Confirm release
          </button>{" "}
          <button type="button" className="button-quiet" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
    </div>
  );
}
