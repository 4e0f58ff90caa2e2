import { describe, expect, inject, it } from "vitest";
import { errorStateIn } from "./tier";

/**
 * `npm start` on an empty data directory and a freshly migrated database reached by a URL without
 * a search path: every parameterless GET route of the OpenAPI document and every page answered,
 * before anything was seeded, without a 5xx and without an error state, to a platform admin and to
 * a tenant's admin; each answered 200 to at least one of them (a platform token must name a tenant
 * on some routes: its 400 says so). The global setup asked (test/server/global-setup.ts); this file
 * judges the answers.
 */
const tier = inject("serverTier");

describe.skipIf(tier.skipped !== undefined)(
  `every route and page on a fresh start${tier.skipped ? ` (SKIPPED: ${tier.skipped})` : ""}`,
  () => {
    if (tier.skipped !== undefined) {
      it.skip(tier.skipped, () => {});
      return;
    }
    const paths = [...new Set(tier.freshStart.map((probe) => probe.path))];

    it("asked the OpenAPI document's routes and the navigation's pages", () => {
      expect(paths).toEqual(expect.arrayContaining(["/api/v1/health", "/api/v1/retention", "/overview", "/retention"]));
    });

    // An empty database is no evidence of agreement: the pages say what was never configured or run.
    it("Reconciliation says no provider is configured and how to configure one, never that anything agrees", () => {
      const pages = tier.freshStart.filter((p) => p.path === "/reconciliation" && p.as.endsWith("(session)"));
      expect(pages.map((p) => [p.as, p.status])).toEqual([
        ["platform (session)", 200],
        ["tenant (session)", 200],
      ]);
      for (const probe of pages) {
        expect(probe.body, probe.as).toContain("No provider is configured");
        expect(probe.body, probe.as).toContain("ONCEBOARD_PROVIDERS_FILE");
        expect(probe.body, probe.as).not.toMatch(/Onceboard agree|every effect matched/);
      }
    });

    it("Overview's Job types table and Claim latency say there is nothing yet", () => {
      const pages = tier.freshStart.filter((p) => p.path === "/overview" && p.as.endsWith("(session)"));
      expect(pages.map((p) => p.status)).toEqual([200, 200]);
      for (const probe of pages) {
        expect(probe.body, probe.as).toContain("No job type reported a delivery or a claim in this range.");
        // A tenant is told why the fleet's claim charts are not its own, not that nothing ran.
        expect(probe.body, probe.as).toContain(
          probe.as.startsWith("tenant")
            ? "Not shown to a tenant: counted only for every tenant"
            : "No claim in this range, so no latency to show.",
        );
      }
    });

    it("Delivery gaps names no provider's job types when none is configured", () => {
      const pages = tier.freshStart.filter((p) => p.path === "/gaps" && p.as.endsWith("(session)"));
      expect(pages.map((p) => p.status)).toEqual([200, 200]);
      for (const probe of pages) {
        expect(probe.body, probe.as).not.toMatch(/order\.(paid|capture|refund|receipt)/);
      }
    });

    for (const path of paths) {
      it(`GET ${path}`, () => {
        const probes = tier.freshStart.filter((probe) => probe.path === path);
        for (const probe of probes) {
          const answer = `${probe.as} admin: ${probe.status} ${probe.body.slice(0, 300)}`;
          expect(errorStateIn(probe.status, probe.body), answer).toBeUndefined();
          expect(probe.status, answer).toBeLessThan(500);
        }
        expect(
          probes.map((probe) => probe.status),
          probes.map((probe) => `${probe.as} admin: ${probe.status} ${probe.body.slice(0, 200)}`).join("\n"),
        ).toContain(200);
      });
    }
  },
);
