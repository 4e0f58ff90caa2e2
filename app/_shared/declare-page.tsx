import { dehydrate, HydrationBoundary, QueryClient, type QueryKey } from "@tanstack/react-query";
import { headers } from "next/headers";
import { type ReactNode, Suspense } from "react";
import { AdminOnly } from "@/components/admin/admin-only";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { PageHeader } from "@/components/ui/page-header";
import type { InvalidPageQuery } from "@/lib/api/page-query-types";
import { type Role, roleAtLeast } from "@/lib/auth/auth-types";
import { clientIpOf } from "@/lib/auth/client-ip";
import { type PageScope, requirePageScope } from "@/lib/auth/page-session";
import { invalidPageQuery, lastValues, type PageQuery } from "@/lib/routes/page-queries";

/** What every step of a declared page reads: who asks, what they may read, the URL's values and its parse. */
export interface PageContext<Q> extends PageScope {
  /** The page's values of the URL, for this session (what an invalid state shows as typed). */
  values: URLSearchParams;
  query: Q;
  /** The client address, for the audit log of an audited read. */
  ip: string | null;
}

/** A read into TanStack Query under the key the client asks with, so the first HTML already holds it. */
export interface Prefetch {
  queryKey: QueryKey;
  queryFn: () => Promise<unknown>;
}

/**
 * A page of the console, declared once: the skeleton every page shares is here (scope → the URL's
 * one parse, lib/routes/page-queries.ts, which proxy.ts answers the status of → the invalid state
 * → what a role below `dataRole` sees instead → load → prefetch → hydrate), the page says only
 * what differs.
 */
export interface PageDeclaration<Q, D> {
  title: string;
  description: string;
  query: PageQuery<Q>;
  /** Beside the error, the form as typed (default: the error alone). Nothing is read for an invalid URL. */
  invalid?: (context: PageScope & { invalid: InvalidPageQuery }) => ReactNode;
  /** Checked after the parse (a bad link says so to anyone): a lower role sees that the page is theirs not to read. */
  dataRole?: { role: Role; page: string };
  /** A server read the render needs; an INVALID_INPUT from it (a cursor of another list) is the link's fault: the invalid state. */
  load?: (context: PageContext<Q>) => Promise<D>;
  /** Reads handed to the client's cache; a failure is not cached as data: the client asks again and shows its error state. */
  prefetch?: (context: PageContext<Q>) => (Prefetch | undefined)[];
  /** With prefetch: the Suspense boundary's key (a new URL, a new boundary) and what shows while the client renders. */
  suspense?: { key: (context: PageContext<Q>) => string; fallback: ReactNode };
  render: (context: PageContext<Q> & { data: D }) => ReactNode;
}

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/** The page's default export: `export default declarePage({ title, description, query, …, render })`. */
export function declarePage<Q, D = undefined>(declaration: PageDeclaration<Q, D>) {
  const page = ({ searchParams }: { searchParams: SearchParams }) => renderPage(declaration, searchParams);
  return Object.assign(page, { [DECLARED_PAGE]: declaration as PageDeclaration<unknown, unknown> });
}

/** Marks a declared page with its declaration, so a test can hold it to the URL parse proxy.ts uses. */
export const DECLARED_PAGE = Symbol.for("onceboard.declaredPage");

async function renderPage<Q, D>(declaration: PageDeclaration<Q, D>, searchParams: SearchParams): Promise<ReactNode> {
  const { title, description, query: pageQuery, invalid, dataRole, load, prefetch, suspense, render } = declaration;
  const header = <PageHeader title={title} description={description} />;
  const { principal, scope } = await requirePageScope("viewer");
  const session = { tenantId: principal.tenantId };
  const values = pageQuery.values(lastValues(await searchParams), session);
  const invalidState = (error: unknown) => {
    const found = invalidPageQuery(values, error);
    return (
      <>
        {header}
        {invalid ? invalid({ principal, scope, invalid: found }) : <InvalidQueryAlert invalid={found} />}
      </>
    );
  };
  let query: Q;
  try {
    query = pageQuery.parse(values, session);
  } catch (error) {
    return invalidState(error);
  }
  if (dataRole && !roleAtLeast(principal.role, dataRole.role))
    return (
      <>
        {header}
        <AdminOnly page={dataRole.page} role={principal.role} />
      </>
    );
  const context: PageContext<Q> = { principal, scope, values, query, ip: clientIpOf(await headers()) };
  let data: D;
  try {
    data = (load ? await load(context) : undefined) as D;
  } catch (error) {
    return invalidState(error);
  }
  const body = render({ ...context, data });
  if (!prefetch)
    return (
      <>
        {header}
        {body}
      </>
    );
  const client = new QueryClient();
  await Promise.all(prefetch(context).map((read) => read && client.prefetchQuery(read)));
  return (
    <>
      {header}
      <HydrationBoundary state={dehydrate(client)}>
        <Suspense key={suspense?.key(context)} fallback={suspense?.fallback}>
          {body}
        </Suspense>
      </HydrationBoundary>
    </>
  );
}
