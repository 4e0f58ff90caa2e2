import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { statesPageQuery } from "../../routes/page-queries";
import { ALERT_RULES } from "./metrics/alert-rules";
import { readRunbook } from "./read-runbook";

/**
 * The alerts' runbooks (served at /overview/runbook/<alert>) link to the States page's list of
 * what each alert is about, and every such link in docs/operations.md is one the page takes.
 */
const OPERATIONS_MD = path.resolve(import.meta.dirname, "../../../docs/operations.md");
const STATE_LINK = /\]\((\/states\?[^)\s]*)\)/g;

describe("runbooks link to the states their alerts are about", () => {
  it("key reuse to its dead-lettered deliveries, unsuppressed redeliveries to failed effects, findings to abandoned ones", async () => {
    const expected: Record<string, string> = {
      OnceboardKeyReuse: "key_reuse",
      OnceboardRedeliveriesNotSuppressed: "failed",
      OnceboardReconcileFindings: "abandoned",
    };
    for (const [alert, state] of Object.entries(expected)) {
      expect(ALERT_RULES.map((r) => r.name)).toContain(alert);
      const section = await readRunbook(alert, OPERATIONS_MD);
      const links = [...(section?.markdown ?? "").matchAll(STATE_LINK)].map((m) => m[1] ?? "");
      const states = links.map((href) => new URL(href, "http://console.local").searchParams.get("state"));
      expect(states, alert).toContain(state);
    }
  });

  it("every link to the States page in the operations guide is one it parses, naming each state it lists", () => {
    const links = [...fs.readFileSync(OPERATIONS_MD, "utf8").matchAll(STATE_LINK)].map((m) => m[1] ?? "");
    const named = new Set<string>();
    for (const href of links) {
      const raw = new URL(href, "http://console.local").searchParams;
      const session = { tenantId: null };
      const { state } = statesPageQuery.parse(statesPageQuery.values(raw, session), session);
      named.add(state);
    }
    expect([...named].sort()).toEqual(["abandoned", "failed", "key_reuse", "stuck"]);
  });
});
