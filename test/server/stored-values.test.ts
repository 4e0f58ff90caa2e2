import { describe, expect, inject, it } from "vitest";
import { HOSTILE_SECRETS } from "../../lib/console/testing/hostile-values";
import { fetchAs, HOSTILE_KEY, SERVER_TENANTS, unhandledIn } from "./tier";

/**
 * Through the built console (issue 35): the Keys page of a key whose outcome and error hold secrets
 * under names the field words do not know — its HTML and its RSC payload — shows none of them; and
 * the console, run with unhandled rejections fatal, has logged none.
 */
const tier = inject("serverTier");

describe.skipIf(tier.skipped !== undefined)(
  `stored values and the terminal${tier.skipped ? ` (SKIPPED: ${tier.skipped})` : ""}`,
  () => {
    if (tier.skipped !== undefined) {
      it.skip(tier.skipped, () => {});
      return;
    }
    const { baseUrl } = tier;
    const tenant = SERVER_TENANTS[0];

    it("the Keys page's HTML and RSC payload show the hostile key's values masked, never the secrets", async () => {
      const reader = tier.credentials.find((c) => c.label === `${tenant} viewer (session)`);
      if (!reader) throw new Error("no session credential for the first tenant");
      const target = `/keys?tenant=${tenant}&key=${encodeURIComponent(HOSTILE_KEY)}`;
      for (const rsc of [false, true]) {
        const response = await fetchAs(baseUrl, target, reader, { rsc });
        const body = await response.text();
        expect(response.status, `${target}${rsc ? " (RSC)" : ""}`).toBe(200);
        // The detail was rendered (masked), so its absence of secrets means something.
        expect(body).toContain("[secret key]");
        expect(body).toContain("password=[redacted]");
        for (const secret of HOSTILE_SECRETS)
          expect(body, `${target}${rsc ? " (RSC)" : ""} shows ${secret}`).not.toContain(secret);
      }
    });

    it("the States page's failed list shows the hostile error masked, in its HTML and RSC payload", async () => {
      const reader = tier.credentials.find((c) => c.label === `${tenant} viewer (session)`);
      if (!reader) throw new Error("no session credential for the first tenant");
      for (const rsc of [false, true]) {
        const response = await fetchAs(baseUrl, "/states?state=failed", reader, { rsc });
        const body = await response.text();
        expect(response.status).toBe(200);
        expect(body).toContain(HOSTILE_KEY);
        expect(body).toContain("password=[redacted]");
        for (const secret of HOSTILE_SECRETS) expect(body, `/states${rsc ? " (RSC)" : ""} shows ${secret}`).not.toContain(secret);
      }
    });

    it("the console logged no unhandled rejection or uncaught exception (it runs with --unhandled-rejections=strict)", () => {
      expect(unhandledIn(tier.logFile)).toEqual([]);
    });
  },
);
