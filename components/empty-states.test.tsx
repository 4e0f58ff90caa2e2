import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Role } from "@/lib/auth/auth-types";
import { Scope } from "@/lib/auth/scope";
import { ensureEffectPartitions } from "@/lib/db/partitions";
import { overviewQuery } from "@/lib/features/overview/contract";
import { getOverviewSeries } from "@/lib/features/overview/get-overview-series";
import { findingsQuery } from "@/lib/features/reconciliation/contract";
import { listFindings } from "@/lib/features/reconciliation/list-findings";
import { listReconciliationWindows } from "@/lib/features/reconciliation/list-reconciliation-windows";
import { readProviderSetup } from "@/lib/features/reconciliation/provider-setup";
import {
  asFirstPage,
  findingsApiUrl,
  findingsQueryKey,
  WINDOWS_FIRST_PAGE,
  windowsQueryKey,
} from "@/lib/features/reconciliation/reconciliation-types";
import { createTestDatabase, type TestDatabase } from "@/test/database";
import { OverviewBody } from "./overview/overview-body";
import { ReconciliationView } from "./reconciliation/reconciliation-view";

// The Overview's top-tenants panel reads the URL's search params; outside Next there is none.
vi.mock("next/navigation", () => ({ useSearchParams: () => new URLSearchParams() }));

/**
 * On a fresh database the pages say only what is true: the Reconciliation page, with no provider
 * configured, says what is not configured and how (never "agree … every effect matched"); with a
 * provider but no run, that no run has been made; the Overview's Job types table and claim charts
 * say there is nothing rather than showing bare headers and axes. Rendered on the server from the
 * read models' own answers, as the pages prefetch them.
 */
let db: TestDatabase;
/** A viewer: the page without the operators' bulk panel. */
const VIEWER: Role = "viewer";
const platform = Scope.ofPrincipal({ tenantId: null });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-empty-states-"));
const saved = { file: process.env.ONCEBOARD_PROVIDERS_FILE, key: process.env.STRIPE_API_KEY };

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureEffectPartitions(db.pool, { back: 1, ahead: 1 });
});
afterAll(async () => {
  process.env.ONCEBOARD_PROVIDERS_FILE = saved.file;
  process.env.STRIPE_API_KEY = saved.key;
  if (saved.file === undefined) delete process.env.ONCEBOARD_PROVIDERS_FILE;
  if (saved.key === undefined) delete process.env.STRIPE_API_KEY;
  fs.rmSync(dir, { recursive: true, force: true });
  await db?.drop();
});

async function reconciliationHtml(): Promise<string> {
  const client = new QueryClient();
  client.setQueryData(
    windowsQueryKey(),
    asFirstPage(await listReconciliationWindows(platform, { limit: WINDOWS_FIRST_PAGE }, db.pool)),
  );
  client.setQueryData(findingsQueryKey(findingsApiUrl({})), await listFindings(platform, findingsQuery.parse({}), db.pool));
  return renderToStaticMarkup(
    <QueryClientProvider client={client}>
      <ReconciliationView filters={{}} platform role={VIEWER} setup={readProviderSetup({ platform: true })} />
    </QueryClientProvider>,
  );
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/&#x27;/g, "'")
    .replace(/\s+/g, " ");

describe("empty states on a fresh database", () => {
  it("Reconciliation with no provider configured: says what is not configured and how, claims no agreement", async () => {
    delete process.env.ONCEBOARD_PROVIDERS_FILE;
    const html = text(await reconciliationHtml());
    expect(html).toContain("No provider is configured");
    expect(html).toContain("ONCEBOARD_PROVIDERS_FILE is not set");
    expect(html).toContain("docs/reconciliation.md");
    expect(html).toContain("No provider is configured here, so no effect has been compared with a provider's objects.");
    expect(html).toContain("None can run until a provider is configured.");
    expect(html).not.toMatch(/agree|every effect matched|matched its provider/);
  });

  it("Reconciliation with a provider whose key is not set: names the variable to set", async () => {
    const file = path.join(dir, "providers.json");
    fs.writeFileSync(
      file,
      JSON.stringify({
        providers: [
          {
            name: "payments",
            label: "PayCo",
            objectNoun: "charge",
            jobTypes: ["invoice.settle"],
            steps: [{ keyPrefix: "settle:" }],
            keyWindowHours: 24,
            adapter: { type: "stripe" },
          },
        ],
      }),
    );
    process.env.ONCEBOARD_PROVIDERS_FILE = file;
    delete process.env.STRIPE_API_KEY;
    const unreadable = text(await reconciliationHtml());
    expect(unreadable).toContain(
      "PayCo cannot be read here, so its job types (invoice.settle) are not reconciled: set STRIPE_API_KEY to read PayCo.",
    );
    expect(unreadable).not.toMatch(/agree|matched its provider/);

    // Configured, never run: says so.
    process.env.STRIPE_API_KEY = "sk_test_empty_states";
    const neverRun = text(await reconciliationHtml());
    expect(neverRun).not.toContain("cannot be read here");
    expect(neverRun).toContain("No run has been made yet.");
    expect(neverRun).toContain(
      "No reconciliation run has been made yet, so no effect has been compared with a provider's objects.",
    );
    expect(neverRun).not.toMatch(/agree|matched its provider/);
  });

  it("Reconciliation with a providers file that has mistakes: lists them for the platform", async () => {
    const file = path.join(dir, "broken.json");
    fs.writeFileSync(file, JSON.stringify({ providers: [{ name: "payments" }] }));
    process.env.ONCEBOARD_PROVIDERS_FILE = file;
    const html = text(await reconciliationHtml());
    expect(html).toContain("Reconciliation is not configured: the providers file has mistakes");
    expect(html).toContain("providers.0.objectNoun");
    expect(readProviderSetup({ platform: false }).error).toBe("the providers file has mistakes");
  });

  it("Overview: the Job types table and the claim charts say there is nothing, not bare headers and axes", async () => {
    const data = await getOverviewSeries(platform, overviewQuery.parse({}), { db: db.pool });
    expect(data.jobTypes).toEqual([]);
    const html = text(renderToStaticMarkup(<OverviewBody data={data} />));
    expect(html).toContain("No job type reported a delivery or a claim in this range.");
    expect(html).toContain("No claim in this range, so no latency to show.");
    expect(html).toContain("No claim in this range.");
    expect(html).toContain("No in-flight wait and no lease takeover in this range.");
  });
});
