import { beforeAll, describe, expect, inject, it } from "vitest";
import {
  type Credential,
  consolePages,
  errorStateIn,
  fetchAs,
  inBatches,
  leaksIn,
  SERVER_TENANTS,
  type ServerTenant,
  signIn,
} from "./tier";

/**
 * Every page of the navigation and every runbook, as every kind of caller, through the built
 * console: no credential and a revoked token are sent to sign in; every role of every tenant and
 * of the platform gets the page without an error state; and the HTML and the RSC payload a
 * tenant's reader receives hold no other tenant's name, keys, owners or outcomes — with or without
 * ?tenant=<another tenant> in the address.
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

    beforeAll(async () => {
      // A session cookie per tenant's viewer too: the leak was in what the page renders, whichever way one signs in.
      for (const credential of tier.credentials) {
        if (credential.kind !== "bearer" || credential.revoked || credential.role !== "viewer" || credential.tenant === undefined)
          continue;
        credentials.push({
          kind: "cookie",
          cookie: await signIn(baseUrl, credential.secret),
          label: `${credential.tenant ?? "platform"} viewer (session cookie)`,
          tenant: credential.tenant,
          role: "viewer",
        });
      }
    });

    const tenantOf = (credential: Credential): ServerTenant | null | undefined =>
      credential.kind === "none" ? undefined : credential.kind === "bearer" && credential.revoked ? undefined : credential.tenant;

    it("sends a caller without a valid credential to sign in, on every page", async () => {
      const outsiders = credentials.filter((credential) => tenantOf(credential) === undefined);
      expect(outsiders.map((c) => c.label)).toEqual(["no credential", "revoked acme admin"]);
      const answers = await inBatches(
        outsiders.flatMap((credential) => consolePages().map((page) => ({ credential, page }))),
        4,
        async ({ credential, page }) => {
          const response = await fetchAs(baseUrl, page, credential);
          await response.body?.cancel();
          return {
            who: `${credential.label} ${page}`,
            status: response.status,
            location: response.headers.get("location") ?? "",
          };
        },
      );
      for (const answer of answers) {
        expect([303, 307, 308], answer.who).toContain(answer.status);
        expect(new URL(answer.location, baseUrl).pathname, answer.who).toBe("/login");
      }
    });

    it("gives every role of every tenant and of the platform every page, with no error state and no other tenant's data", async () => {
      const readers = credentials.filter((credential) => tenantOf(credential) !== undefined);
      // Each page plain, and (for a tenant's reader) asking for each other tenant by ?tenant=.
      const requests = readers.flatMap((credential) => {
        const tenant = tenantOf(credential);
        return consolePages().flatMap((page) => {
          const targets = [page];
          if (tenant) for (const other of SERVER_TENANTS) if (other !== tenant) targets.push(`${page}?tenant=${other}`);
          return targets.flatMap((target) => [
            { credential, tenant, target, rsc: false },
            { credential, tenant, target, rsc: true },
          ]);
        });
      });
      const problems = (
        await inBatches(requests, 6, async ({ credential, tenant, target, rsc }) => {
          const response = await fetchAs(baseUrl, target, credential, { rsc });
          const body = await response.text();
          const who = `${credential.label} GET ${target}${rsc ? " (RSC)" : ""}`;
          const found: string[] = [];
          if (response.status !== 200) found.push(`${who}: answered ${response.status}`);
          const error = rsc
            ? response.status >= 500
              ? `answered ${response.status}`
              : undefined
            : errorStateIn(response.status, body);
          if (error) found.push(`${who}: ${error}`);
          if (tenant) for (const leak of leaksIn(body, tenant, target)) found.push(`${who}: holds ${leak}`);
          return found;
        })
      ).flat();
      expect(problems).toEqual([]);
    });
  },
);
