import fs from "node:fs";
import { NAV_ITEMS } from "../../components/shell/nav-items";
import { ALERT_RULES, runbookHref } from "../../lib/features/overview/metrics/alert-rules";
import { TENANT_KEYS as SECOND_SYSTEM_KEYS, TENANTS as SECOND_SYSTEM_TENANTS } from "../second-system/workload";

/**
 * What the real-server tier's files share: the tenants it seeds, the credentials it holds, how a
 * request is sent as one of them, and what a page and a route are (read from the navigation, the
 * alert rules and the OpenAPI document, so a new page or route joins the tier without an edit here).
 */

/** The first tenant's key whose outcome and error hold lib/console/testing/hostile-values.ts's secrets. */
export const HOSTILE_KEY = "capture:hostile-values";

/** Three tenants with names that appear nowhere else in the console. */
export const SERVER_TENANTS = ["acme", "globex", "initech"] as const;

/**
 * The second system's tenants (test/second-system/), seeded with its known workload beside the
 * three: a viewer of each reads every page, and no page shows one tenant another's keys.
 */
export { SECOND_SYSTEM_TENANTS };
export const ALL_SERVER_TENANTS = [...SERVER_TENANTS, ...SECOND_SYSTEM_TENANTS] as const;
export type ServerTenant = (typeof ALL_SERVER_TENANTS)[number];

/** The rows a tenant is seeded with: every string is the tenant's alone. */
export function tenantRows(tenant: (typeof SERVER_TENANTS)[number]) {
  return {
    completedKey: `capture:ord-${tenant}-4711`,
    stuckKey: `capture:ord-${tenant}-stuck`,
    /** A failed step: the States page's default list (failed) shows each tenant's own. */
    failedKey: `capture:ord-${tenant}-declined`,
    violationKey: `mark-paid:ord-${tenant}-dup`,
    owner: `worker-${tenant}-7`,
    messageId: `msg-${tenant}-4711`,
    chargeId: `ch_${tenant}_secret`,
  };
}

/** The strings that would show `tenant`'s data; its bare name too, unless the request itself carried it. */
export function markersOf(tenant: ServerTenant, request: string): string[] {
  const rows = tenant === "northwind" || tenant === "umbrella" ? SECOND_SYSTEM_KEYS[tenant] : Object.values(tenantRows(tenant));
  return request.toLowerCase().includes(tenant) ? rows : [tenant, ...rows];
}

export type Role = "viewer" | "operator" | "admin";

export type Credential =
  | { kind: "none"; label: string }
  | { kind: "bearer"; secret: string; label: string; tenant?: ServerTenant | null; role?: Role; revoked?: boolean }
  | { kind: "cookie"; cookie: string; label: string; tenant?: ServerTenant | null; role?: Role; revoked?: boolean };

/** The tenant a credential reads (null: the platform), or undefined when it lets nobody in. */
export function readerOf(credential: Credential): ServerTenant | null | undefined {
  if (credential.kind === "none" || credential.revoked) return undefined;
  return credential.tenant;
}

/** Whether a page's answer sends the reader to sign in: an HTTP redirect, or Next's streamed one. */
export function sendsToSignIn(status: number, location: string | null, body: string): boolean {
  if ([303, 307, 308].includes(status)) return new URL(location ?? "/", "http://x").pathname === "/login";
  return /NEXT_REDIRECT;[a-z]+;\/login[?;]/.test(body);
}

export interface FreshStartProbe {
  path: string;
  /** Whose admin asked, with a Bearer token, or (pages only) with a session: a page wants a session. */
  as: "platform" | "tenant" | "platform (session)" | "tenant (session)";
  status: number;
  body: string;
}

export type ServerTier =
  | { skipped: string }
  | { skipped?: undefined; baseUrl: string; credentials: Credential[]; freshStart: FreshStartProbe[]; logFile: string };

/** The lines of a log that report an unhandled rejection or an uncaught exception (Next's wording and the console's). */
export function unhandledIn(file: string): string[] {
  try {
    return fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => /unhandled ?rejection|uncaught ?exception/i.test(line));
  } catch {
    return [];
  }
}

/** Every page of the navigation, and every alert's runbook. */
export function consolePages(): string[] {
  return [...NAV_ITEMS.map((item) => item.href), ...ALERT_RULES.map((rule) => runbookHref(rule.name))];
}

/** The request's headers for a credential (and an RSC request when asked). */
export function headersFor(credential: Credential, options: { rsc?: boolean } = {}): Record<string, string> {
  const headers: Record<string, string> = {};
  if (credential.kind === "bearer") headers.authorization = `Bearer ${credential.secret}`;
  if (credential.kind === "cookie") headers.cookie = credential.cookie;
  if (options.rsc) headers.rsc = "1";
  return headers;
}

/**
 * GET `target` (a path with its query, sent as typed: no re-encoding) as `credential`. Redirects
 * are not followed, but for an RSC request the one Next sends to add its cache-busting `_rsc`
 * parameter is: the payload a client router gets is behind it.
 */
export async function fetchAs(
  baseUrl: string,
  target: string,
  credential: Credential,
  options: { rsc?: boolean; method?: string; body?: string } = {},
): Promise<Response> {
  const response = await send(baseUrl, target, credential, options);
  const location = response.headers.get("location");
  if (options.rsc && location && [307, 308].includes(response.status)) {
    const next = new URL(location, baseUrl);
    if (next.origin === baseUrl && next.searchParams.has("_rsc")) {
      await response.body?.cancel();
      return send(baseUrl, `${next.pathname}${next.search}`, credential, options);
    }
  }
  return response;
}

function send(
  baseUrl: string,
  target: string,
  credential: Credential,
  options: { rsc?: boolean; method?: string; body?: string },
): Promise<Response> {
  return fetch(`${baseUrl}${target}`, {
    method: options.method ?? "GET",
    headers: {
      ...headersFor(credential, options),
      ...(options.body !== undefined ? { "content-type": "application/json", origin: baseUrl } : {}),
    },
    body: options.body,
    redirect: "manual",
    signal: AbortSignal.timeout(60_000),
  });
}

/** A session cookie for `secret`, the way the sign-in form gets one. */
export async function signIn(baseUrl: string, secret: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: baseUrl, "sec-fetch-site": "same-origin" },
    body: JSON.stringify({ token: secret }),
    redirect: "manual",
  });
  const cookies = response.headers.getSetCookie().map((line) => line.split(";")[0] ?? "");
  if (response.status >= 400 || cookies.length === 0) throw new Error(`sign-in answered ${response.status} without a cookie`);
  return cookies.join("; ");
}

interface OpenApiParameter {
  name: string;
  in: "query" | "path" | "header" | "cookie";
  required?: boolean;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: OpenApiParameter[] }>>;
}

/** The console's own OpenAPI document, as the running server serves it. */
export async function openApiDocument(baseUrl: string, secret: string): Promise<OpenApiDocument> {
  const response = await fetch(`${baseUrl}/api/v1/openapi.json`, { headers: { authorization: `Bearer ${secret}` } });
  if (!response.ok) throw new Error(`GET /api/v1/openapi.json answered ${response.status}`);
  return (await response.json()) as OpenApiDocument;
}

export interface DocumentedOperation {
  method: string;
  /** The path template, /api/v1/effects/{key}. */
  template: string;
  parameters: OpenApiParameter[];
}

/** Every operation of the document. */
export function operationsOf(document: OpenApiDocument): DocumentedOperation[] {
  return Object.entries(document.paths).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, operation]) => ({ method: method.toUpperCase(), template, parameters: operation.parameters ?? [] })),
  );
}

/** Every parameterless GET route of the OpenAPI document, and every page. */
export async function freshStartTargets(baseUrl: string, secret: string): Promise<string[]> {
  const routes = operationsOf(await openApiDocument(baseUrl, secret))
    .filter((op) => op.method === "GET" && !op.template.includes("{") && !op.parameters.some((p) => p.required))
    .map((op) => op.template);
  return [...routes, ...consolePages()];
}

/** Why a page's or route's answer is an error state, or undefined when it is not. */
export function errorStateIn(status: number, body: string): string | undefined {
  if (status >= 500) return `answered ${status}`;
  for (const sign of ["could not be loaded", "state-error", "internal error", "Internal Server Error"])
    if (body.includes(sign)) return `shows an error state ("${sign}")`;
  return undefined;
}

/** Another tenant's strings found in `body`, for a reader of `tenant` who sent `request`. */
/**
 * The audit log (its page and its API) quotes what its own tenant's people typed: acme's search for
 * "globex" is an acme row. There another tenant's bare name is no leak; its rows' markers still are.
 */
const QUOTES_WHAT_WAS_TYPED = /^\/(api\/v1\/)?audit(\?|\/|$)/;

export function leaksIn(body: string, tenant: ServerTenant, request: string): string[] {
  const quoted = QUOTES_WHAT_WAS_TYPED.test(request) ? `${request} ${ALL_SERVER_TENANTS.join(" ")}` : request;
  return ALL_SERVER_TENANTS.filter((other) => other !== tenant).flatMap((other) =>
    markersOf(other, quoted)
      .filter((marker) => body.includes(marker))
      .map((marker) => `${other}: ${marker}`),
  );
}

/**
 * What a tenant's credential must never be shown, on a page, in its RSC payload or from a route:
 * figures that only exist for every tenant and facts about the platform (issue 35, finding 6).
 * JSON inside a page's flight data has its quotes escaped, hence the optional backslashes.
 */
const FLEET_MARKERS: [string, RegExp][] = [
  ["a worker's internal /metrics address", /https?:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):\d+\/metrics/],
  ["the server's version", /serverVersion|server_version/],
  ["a fleet-wide tally", /\\?"(?:deliveries|redeliveries|objectsSeen|effectsSeen|matched)\\?":\d/],
  ["a figure labelled every tenant's", />all tenants</],
];

/** The fleet-wide figures and platform facts `body` holds (empty for a body a tenant may see). */
export function fleetLeaksIn(body: string): string[] {
  return FLEET_MARKERS.filter(([, pattern]) => pattern.test(body)).map(
    ([what, pattern]) => `${what} (${body.match(pattern)?.[0]})`,
  );
}

/** Runs `work` over `items`, at most `limit` at a time. */
export async function inBatches<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}
