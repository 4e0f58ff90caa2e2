import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { PlanView } from "@/lib/features/retention-and-gaps/contract";
import { PlanSection } from "./plan-section";

/** A plan with nothing to do says so and offers nothing to confirm. */
const withQueries = (node: ReactNode) =>
  renderToStaticMarkup(<QueryClientProvider client={new QueryClient()}>{node}</QueryClientProvider>);

const PLAN: PlanView = {
  now: "2026-12-03T19:00:00.000Z",
  keepSeconds: 7 * 86_400,
  dropBefore: "2026-11-26T19:00:00.000Z",
  runwayHours: 168,
  create: [],
  partitions: [],
  orphans: [],
  index: [],
};

describe("the retention plan", () => {
  it("with nothing to do: says so, and offers no Apply and no Confirm", () => {
    const html = withQueries(<PlanSection plan={PLAN} canApply />);
    expect(html).toContain("Nothing to do");
    expect(html).not.toContain("Apply plan");
    expect(html).not.toContain("Confirm apply");
  });

  it("with work to do: offers Apply plan… to an admin", () => {
    const plan: PlanView = {
      ...PLAN,
      create: [{ name: "effects_p20261211", from: "2026-12-11T00:00:00.000Z", to: "2026-12-12T00:00:00.000Z", reason: "ahead" }],
    };
    const html = withQueries(<PlanSection plan={plan} canApply />);
    expect(html).toContain("Apply plan…");
    expect(html).not.toContain("Nothing to do");
    expect(withQueries(<PlanSection plan={plan} canApply={false} />)).not.toContain("Apply plan");
  });
});
