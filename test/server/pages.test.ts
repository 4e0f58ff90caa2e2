import { describe, expect, inject, it } from "vitest";
import { NAV_ITEMS } from "../../components/shell/nav-items";
import {
  ALL_SERVER_TENANTS,
  type Credential,
  consolePages,
  errorStateIn,
  fetchAs,
  fleetLeaksIn,
  freshStartTargets,
  inBatches,
  leaksIn,
  openApiDocument,
  operationsOf,
  readerOf,
  SERVER_TENANTS,
  sendsToSignIn,
} from "./tier";

/**
 * Every page of the navigation and every runbook, as every kind of caller, through the built
 * console: no credential and a revoked token (Bearer, or a session made before the revocation) are
 * sent to sign in; every role of every tenant and of the platform, signed in, gets the page without
 * an error state; and the HTML and the RSC payload a tenant's reader receives hold no other
 * tenant's name, keys, owners or outcomes — with or without ?tenant=<another tenant>.
 */
const tier = inject("serverTier");

describe.skipIf(tier.skipped !== undefined)(
  `pages × credentials × tenants${tier.skipped ? ` (SKIPPED: ${tier.skipped})` : ""}`,
  () => {
    if (tier.skipped !== undefined) {
      it.skip(tier.skipped, () => {});
      return;
    }
    const { baseUrl } = tier;
    const credentials: Credential[] = [{ kind: "none", label: "no credential" }, ...tier.credentials];
    const credential = (label: string) => {
      const found = tier.credentials.find((c) => c.label === label);
      if (!found) throw new Error(`no credential "${label}"`);
      return found;
    };

    it("sends a caller without a valid credential to sign in, on every page, with nobody's data", async () => {
      const outsiders = credentials.filter((c) => readerOf(c) === undefined);
      expect(outsiders.map((c) => c.label)).toEqual(["no credential", "revoked acme admin", "revoked acme admin (session)"]);
      const problems = (
        await inBatches(
          outsiders.flatMap((caller) => consolePages().map((page) => ({ caller, page }))),
          6,
          async ({ caller, page }) => {
            const response = await fetchAs(baseUrl, page, caller);
            const body = await response.text();
            const who = `${caller.label} GET ${page}`;
            const found: string[] = [];
            if (!sendsToSignIn(response.status, response.headers.get("location"), body))
              found.push(`${who}: answered ${response.status}, not a way to sign in`);
            for (const tenant of ALL_SERVER_TENANTS)
              for (const leak of leaksIn(body, tenant, page)) found.push(`${who}: holds ${leak}`);
            return found;
          },
        )
      ).flat();
      expect(problems).toEqual([]);
    });

    it("gives every role of every tenant and of the platform every page, with no error state and no other tenant's data", async () => {
      const readers = credentials.filter((c) => readerOf(c) !== undefined);
      // Each page plain, and (for a tenant's reader) asking for each other tenant by ?tenant=.
      const requests = readers.flatMap((caller) => {
        const tenant = readerOf(caller);
        return consolePages().flatMap((page) => {
          const targets = [page];
          if (tenant) for (const other of SERVER_TENANTS) if (other !== tenant) targets.push(`${page}?tenant=${other}`);
          return targets.flatMap((target) => [
            { caller, tenant, target, rsc: false },
            { caller, tenant, target, rsc: true },
          ]);
        });
      });
      const problems = (
        await inBatches(requests, 6, async ({ caller, tenant, target, rsc }) => {
          const response = await fetchAs(baseUrl, target, caller, { rsc });
          const body = await response.text();
          const who = `${caller.label} GET ${target}${rsc ? " (RSC)" : ""}`;
          const found: string[] = [];
          if (tenant) for (const leak of leaksIn(body, tenant, target)) found.push(`${who}: holds ${leak}`);
          // A page may want the session cookie rather than a Bearer token; a session must get the page.
          if (caller.kind === "bearer" && sendsToSignIn(response.status, response.headers.get("location"), body)) return found;
          if (response.status !== 200) found.push(`${who}: answered ${response.status}`);
          else if (sendsToSignIn(response.status, null, body)) found.push(`${who}: sent to sign in`);
          const error = rsc ? undefined : errorStateIn(response.status, body);
          if (error) found.push(`${who}: ${error}`);
          return found;
        })
      ).flat();
      expect(problems).toEqual([]);
    });

    it("shows a tenant's credential no fleet-wide figure on any page or GET route: computed for the tenant, or withheld", async () => {
      const platform = credentials.find((c) => c.kind === "bearer" && readerOf(c) === null);
      if (platform?.kind !== "bearer") throw new Error("the tier has no platform token");
      const targets = await freshStartTargets(baseUrl, platform.secret);
      const tenantReaders = credentials.filter((c) => typeof readerOf(c) === "string");
      expect(tenantReaders.length).toBeGreaterThan(0);
      const requests = tenantReaders.flatMap((caller) =>
        targets.flatMap((target) => [
          { caller, target, rsc: false },
          { caller, target, rsc: true },
        ]),
      );
      const problems = (
        await inBatches(requests, 6, async ({ caller, target, rsc }) => {
          const body = await (await fetchAs(baseUrl, target, caller, { rsc })).text();
          return fleetLeaksIn(body).map((leak) => `${caller.label} GET ${target}${rsc ? " (RSC)" : ""}: holds ${leak}`);
        })
      ).flat();
      expect(problems).toEqual([]);
      // The public health check tells nobody a version either.
      const health = await (await fetch(`${baseUrl}/api/v1/health`)).text();
      expect(fleetLeaksIn(health)).toEqual([]);
    });

    it("shows the API's INVALID_INPUT state, never a 5xx or an internal error, for a query the API refuses", async () => {
      const reader = credential("acme viewer (session)");
      const platform = credential("platform admin");
      const names = queryParameterNames(await openApiDocument(baseUrl, platform.kind === "bearer" ? platform.secret : ""));
      const bad = ["a%00b", "tab%09here", "0000-01-01T00:00:00Z", "9999999999999999999"];
      const pages = NAV_ITEMS.map((item) => item.href);
      const answers = await inBatches(
        pages.flatMap((page) => names.flatMap((name) => bad.map((value) => `${page}?${name}=${value}`))),
        6,
        async (target) => {
          const response = await fetchAs(baseUrl, target, reader);
          return { target, status: response.status, body: await response.text() };
        },
      );
      // An invalid URL answers 400 and says INVALID_INPUT; a valid one 200 without it; a job type
      // no worker reported (a well-formed value the Overview checks) 404 with its banner.
      const problems = answers.flatMap(({ target, status, body }) => {
        if (status >= 500) return [`${target}: answered ${status}`];
        const invalid = body.includes("INVALID_INPUT");
        if (body.includes("state-error") && !invalid) return [`${target}: an error state that is not INVALID_INPUT`];
        if (invalid && status !== 400) return [`${target}: shows INVALID_INPUT with a ${status}`];
        if (status === 400 && !invalid) return [`${target}: a 400 that does not say INVALID_INPUT`];
        if (status === 404 && !body.includes('data-testid="unknown-job-type"')) return [`${target}: a 404 without its reason`];
        if (![200, 400, 404].includes(status)) return [`${target}: answered ${status}`];
        return [];
      });
      expect(problems).toEqual([]);
      // Every page of the navigation reads some parameter, and says so when it is wrong.
      for (const page of pages)
        expect(
          answers.some((a) => a.target.startsWith(`${page}?`) && a.body.includes("INVALID_INPUT")),
          `${page} never showed INVALID_INPUT`,
        ).toBe(true);
    });

    it("answers a page with an invalid filter with a 4xx, its chrome and the error beside its form, for every page", async () => {
      const admin = credential("platform admin (session)");
      // One wrong value per page that reads a query, as a person would type or paste it.
      const bad: [string, number][] = [
        ["/overview?from=notadate", 400],
        ["/overview?jobType=no-such-job", 404],
        ["/keys?status=bogus", 400],
        ["/gaps?range=forever", 400],
        ["/gaps?tenant=a%00b", 400],
        ["/violations?limit=0", 400],
        ["/states?state=bogus", 400],
        ["/reconciliation?state=bogus", 400],
        ["/retention?runs=0", 400],
        ["/audit?limit=-1", 400],
        [`/admin?tenant=${"t".repeat(300)}`, 400],
      ];
      const pages = new Set(bad.map(([target]) => new URL(target, baseUrl).pathname));
      for (const item of NAV_ITEMS) expect(pages.has(item.href), `${item.href} has no invalid-URL case`).toBe(true);
      const problems = (
        await inBatches(bad, 4, async ([target, expected]) => {
          const response = await fetchAs(baseUrl, target, admin);
          const body = await response.text();
          const found: string[] = [];
          if (response.status !== expected) found.push(`${target}: answered ${response.status}, not ${expected}`);
          // The page's own chrome (the sidebar's links), not a bare error page.
          for (const item of NAV_ITEMS)
            if (!body.includes(`href="${item.href}"`)) found.push(`${target}: no link to ${item.href}`);
          if (expected === 400 && !body.includes("INVALID_INPUT")) found.push(`${target}: does not say INVALID_INPUT`);
          if (response.headers.get("x-onceboard-page-status")) found.push(`${target}: leaks the page-status marker`);
          return found;
        })
      ).flat();
      expect(problems).toEqual([]);
      // The Keys page keeps its form, with what was typed, beside the error.
      const keys = await (await fetchAs(baseUrl, "/keys?q=ord-1&status=bogus", admin)).text();
      expect(keys).toMatch(/<form[^>]*role="search"|<form/);
      expect(keys).toContain('value="ord-1"');
      // A client-side navigation's RSC request keeps its 200, so the router renders the error in place.
      expect((await fetchAs(baseUrl, "/keys?status=bogus", admin, { rsc: true })).status).toBe(200);
    });

    it("keeps each page's filter form beside the error, holding what was typed, and reads no list for it", async () => {
      const admin = credential("platform admin (session)");
      const longTenant = "t".repeat(300);
      // Per page: an invalid URL as typed, the form it keeps, the typed values that form holds, the
      // field the error names, and what the page shows only for a valid one (not read, not shown).
      const cases: { target: string; form: string; holds: RegExp[]; names: string; absent: string }[] = [
        {
          target: "/overview?from=notadate&to=2026-01-02T00%3A00%3A00Z&jobType=capture",
          form: 'aria-label="Custom range (UTC)"',
          holds: [/<input type="text"[^>]*name="from"[^>]*value="notadate"/, /name="jobType"[^>]*value="capture"/],
          names: "invalid query: from",
          absent: "Pause live",
        },
        {
          target: "/violations?from=notadate&constraint=orders_pkey",
          form: 'data-testid="violation-filters"',
          holds: [/name="from"[^>]*value="notadate"/, /name="constraint"[^>]*value="orders_pkey"/],
          names: "invalid query: from",
          absent: "violations-heading",
        },
        {
          target: "/states?state=failed&from=notadate&jobType=capture-payment",
          form: 'data-testid="state-filters"',
          holds: [/name="from"[^>]*value="notadate"/, /name="jobType"[^>]*value="capture-payment"/],
          names: "invalid query: from",
          absent: 'data-testid="state-list"',
        },
        {
          target: "/reconciliation?kind=bogus&provider=stripe",
          form: 'data-testid="finding-filters"',
          holds: [/<option value="bogus" selected="">/, /name="provider"[^>]*value="stripe"/],
          names: "invalid query: kind",
          absent: "findings-layout",
        },
        {
          target: "/retention?runs=abc",
          form: 'data-testid="run-counts"',
          holds: [/\?runs=abc/],
          names: "invalid query: runs",
          absent: 'data-testid="partitions"',
        },
        {
          target: "/audit?actor=alice&from=notadate",
          form: 'data-testid="audit-filters"',
          holds: [/name="actor"[^>]*value="alice"/, /name="from"[^>]*value="notadate"/],
          names: "invalid query: from",
          absent: 'data-testid="audit-rows"',
        },
        {
          target: `/admin?tenant=${longTenant}`,
          form: 'data-testid="admin-tenant-filter"',
          holds: [new RegExp(`name="tenant"[^>]*value="${longTenant}"`)],
          names: "invalid query: tenant",
          absent: 'data-testid="tokens"',
        },
      ];
      const problems = (
        await inBatches(cases, 3, async ({ target, form, holds, names, absent }) => {
          const response = await fetchAs(baseUrl, target, admin);
          const body = await response.text();
          const found: string[] = [];
          if (response.status !== 400) found.push(`${target}: answered ${response.status}, not 400`);
          if (!body.includes(form)) found.push(`${target}: no filter form (${form})`);
          for (const value of holds) if (!value.test(body)) found.push(`${target}: the form does not hold ${value}`);
          // The error beside the form: announced, naming the field, with its code.
          const alert = /data-testid="invalid-query"><div class="state state-error" role="alert">([\s\S]*?)<\/div><\/div>/.exec(
            body,
          )?.[1];
          if (alert === undefined) found.push(`${target}: no alert beside the form`);
          else {
            if (!alert.includes(names)) found.push(`${target}: the alert does not say "${names}"`);
            if (!alert.includes("<code>INVALID_INPUT</code>")) found.push(`${target}: the alert has no code`);
          }
          if (body.indexOf(form) > body.indexOf('data-testid="invalid-query"'))
            found.push(`${target}: the error is not after its form`);
          if (body.includes(absent)) found.push(`${target}: shows ${absent}, read for an invalid link`);
          return found;
        })
      ).flat();
      expect(problems).toEqual([]);
    });
  },
);

/** Every query parameter name the OpenAPI document knows (the pages' queries speak the API's). */
function queryParameterNames(document: Awaited<ReturnType<typeof openApiDocument>>): string[] {
  return [...new Set(operationsOf(document).flatMap((op) => op.parameters.filter((p) => p.in === "query").map((p) => p.name)))];
}
