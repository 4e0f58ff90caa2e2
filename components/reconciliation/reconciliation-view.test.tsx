import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Role } from "@/lib/auth/auth-types";
import { Scope } from "@/lib/auth/scope";
import { demoProvidersFile } from "@/lib/demo/providers-file";
import { findingsQuery } from "@/lib/features/reconciliation/contract";
import { getFinding } from "@/lib/features/reconciliation/get-finding";
import { listFindings } from "@/lib/features/reconciliation/list-findings";
import { listReconciliationWindows } from "@/lib/features/reconciliation/list-reconciliation-windows";
import { readProviderSetup } from "@/lib/features/reconciliation/provider-setup";
import {
  asFirstPage,
  type FindingFilters,
  findingQueryKey,
  findingsApiUrl,
  findingsQueryKey,
  WINDOWS_FIRST_PAGE,
  windowsQueryKey,
} from "@/lib/features/reconciliation/reconciliation-types";
import {
  RECON_LOAD,
  RECON_SEED,
  seedReconciliation,
  seedReconciliationLoad,
} from "@/lib/features/reconciliation/testing/seed-reconciliation";
import { createTestDatabase, type TestDatabase } from "@/test/database";
import { ReconciliationView } from "./reconciliation-view";
import { windowEnds } from "./window-label";

/**
 * The Reconciliation page as the server renders it from the read models' own answers, with the
 * demo's providers file: a window the scheduler reran is one line with its reruns folded, the
 * open finding sits in the list's layout beside it, and its provider objects link to the
 * provider's own page (the demo's objectUrl), amounts whole.
 */
const NOW = new Date();
const platform = Scope.ofPrincipal({ tenantId: null });
const VIEWER: Role = "viewer";
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-recon-view-"));
const saved = { file: process.env.ONCEBOARD_PROVIDERS_FILE, key: process.env.STRIPE_API_KEY };
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedReconciliation(db.pool, NOW);
  await seedReconciliationLoad(db.pool, NOW);
  // The demo's own providers file, as `npm run demo` writes it.
  const file = path.join(dir, "demo-providers.json");
  fs.writeFileSync(file, JSON.stringify(demoProvidersFile({ mailerUrl: "http://127.0.0.1:9/mailer/messages" })));
  process.env.ONCEBOARD_PROVIDERS_FILE = file;
  process.env.STRIPE_API_KEY = "sk_test_recon_view";
});
afterAll(async () => {
  for (const [name, value] of [
    ["ONCEBOARD_PROVIDERS_FILE", saved.file],
    ["STRIPE_API_KEY", saved.key],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  await db?.drop();
});

async function render(filters: FindingFilters): Promise<string> {
  const client = new QueryClient();
  client.setQueryData(
    windowsQueryKey(),
    asFirstPage(await listReconciliationWindows(platform, { limit: WINDOWS_FIRST_PAGE, now: NOW }, db.pool)),
  );
  const query = findingsQuery.parse({ ...filters, finding: undefined });
  client.setQueryData(findingsQueryKey(findingsApiUrl(filters)), await listFindings(platform, query, db.pool));
  if (filters.finding)
    client.setQueryData(findingQueryKey(filters.finding), await getFinding(platform, filters.finding, db.pool));
  return renderToStaticMarkup(
    <QueryClientProvider client={client}>
      <ReconciliationView filters={filters} platform role={VIEWER} setup={readProviderSetup({ platform: true })} />
    </QueryClientProvider>,
  );
}

const count = (html: string, text: string) => html.split(text).length - 1;
const attributesOf = (html: string, testId: string) =>
  [...html.matchAll(new RegExp(`<[a-z]+[^>]*data-testid="${testId}"[^>]*>`, "g"))].map((m) => m[0]);

describe("the Reconciliation page", () => {
  it("shows a window the scheduler reran once, by its latest run, its earlier runs folded under it", async () => {
    const html = await render({});
    const [, rerun] = (await listReconciliationWindows(platform, { limit: 20, now: NOW }, db.pool)).windows;
    if (!rerun) throw new Error("no rerun window");
    // Three windows, each once: the running one, the completed one rerun eight times, the failed mailer's.
    expect(attributesOf(html, "run-window")).toHaveLength(3);
    const [start, end] = windowEnds(rerun.windowFrom, rerun.windowTo);
    // Stripe's window, and the mailer's of the same hours: each once, however many times it ran.
    expect(count(html, `<span>${start} →</span> <span>${end}</span>`)).toBe(2);
    expect(count(html, `data-testid="run-window" data-status="completed"`)).toBe(1);
    const folds = attributesOf(html, "run-window-fold");
    expect(folds).toHaveLength(1);
    expect(folds[0]).toContain('aria-expanded="false"');
    expect(html).toContain(`Show ${RECON_LOAD.reruns} earlier runs of this window`);
    // Folded: no earlier run is drawn until asked for.
    expect(attributesOf(html, "earlier-run")).toHaveLength(0);
  });

  it("puts the open finding in the list's layout beside it, and a pane saying what opening one shows while none is", async () => {
    const closed = await render({ tenant: RECON_LOAD.tenant });
    expect(closed).toContain('class="findings-layout findings-layout-open"');
    expect(attributesOf(closed, "no-finding-open")).toHaveLength(1);
    expect(closed.replaceAll("&#x27;", "'")).toContain(
      "Open a finding from the list to see Onceboard's record and the provider's objects side by side.",
    );

    const [, , middle] = (await listFindings(platform, findingsQuery.parse({ tenant: RECON_LOAD.tenant }), db.pool)).findings;
    if (!middle) throw new Error("no third finding");
    const open = await render({ tenant: RECON_LOAD.tenant, finding: middle.id });
    expect(open).toMatch(
      /class="findings-layout findings-layout-open"[^>]*><div class="findings-column">[\s\S]*data-testid="findings-table"[\s\S]*<\/div><section[^>]*data-testid="finding-detail"/,
    );
    expect(attributesOf(open, "no-finding-open")).toHaveLength(0);
    // The row that opened it is marked, and keeps its place in the list (the list is not re-cut around it).
    const rows = attributesOf(open, "finding-row");
    expect(rows).toHaveLength(RECON_LOAD.findings);
    expect(rows[2]).toContain(`data-finding="${middle.id}"`);
    expect(rows[2]).toContain('aria-selected="true"');
  });

  it("links each provider object to the provider's own page, from the demo's providers file, with its amounts whole", async () => {
    const [first] = (await listFindings(platform, findingsQuery.parse({ tenant: RECON_LOAD.tenant }), db.pool)).findings;
    if (!first) throw new Error("no finding");
    const html = await render({ tenant: RECON_LOAD.tenant, finding: first.id });
    const links = attributesOf(html, "provider-object-link");
    expect(links).toHaveLength(1);
    expect(links[0]).toContain(`href="https://dashboard.stripe.com/test/payments/${RECON_LOAD.driftObject(1)}"`);
    expect(links[0]).toContain('target="_blank"');
    expect(links[0]).toContain('rel="noopener noreferrer"');
    // Side by side, every digit: 17101 recorded here, 17102 at Stripe, the difference said in words.
    expect(html).toMatch(
      new RegExp(
        `data-testid="ours-amount"><span class="whole-number">${RECON_LOAD.recordedAmount(1)}</span></td><td data-side="theirs" data-testid="theirs-amount" data-differs="true"><span class="whole-number">${RECON_LOAD.providerAmount(1)}</span><span class="finding-differs"> differs</span>`,
      ),
    );
    expect(html).toContain(`<th scope="col" data-side="ours">Onceboard</th><th scope="col" data-side="theirs">Stripe</th>`);
  });

  it("an object no claim made: no Onceboard side, the provider's object still linked; a provider with no objectUrl, no link", async () => {
    const [orphan] = (await listFindings(platform, findingsQuery.parse({ kind: "unknown_to_onceboard" }), db.pool)).findings;
    if (!orphan) throw new Error("no orphan");
    const html = await render({ kind: "unknown_to_onceboard", finding: orphan.id });
    expect(attributesOf(html, "provider-object-link")[0]).toContain(
      `href="https://dashboard.stripe.com/test/payments/${RECON_SEED.orphanObject}"`,
    );
    expect(html).toContain("No effect: Onceboard never claimed this key");

    // The demo's mailer has no objectUrl: its messages are named, not linked.
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, job_type, effect_key, provider_object_ids, theirs, detail)
       VALUES ('mailer:key:acme:receipt:acme-1', 'mailer', 'duplicated_at_provider', 'acme', 'order.receipt', 'receipt:acme-1',
               '{msg_1,msg_2}', '[{"id":"msg_1"},{"id":"msg_2"}]', '2 messages carry receipt:acme-1')
       RETURNING id::text AS id`,
    );
    const mail = await render({ provider: "mailer", finding: rows[0]?.id });
    expect(attributesOf(mail, "provider-object-link")).toHaveLength(0);
    expect(mail).toContain("<code>msg_2</code>");
    expect(mail).toContain("Mailer 2 of 2");
  });
});
