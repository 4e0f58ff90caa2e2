import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { CreatedTokenResponse } from "@/lib/features/tokens-and-sessions/contract";
import { CreatedSecret } from "./created-secret";

/** A created token is announced as a success, not in the red of an error. */
describe("a created token", () => {
  it("is announced as a success, its secret shown once", () => {
    const created = {
      token: { name: "billing-worker" },
      secret: "ob_secret",
    } as unknown as CreatedTokenResponse;
    const html = renderToStaticMarkup(<CreatedSecret created={created} onDismiss={() => {}} />);
    expect(html).toMatch(/<div class="banner banner-stacked" data-tone="success" role="status"/);
    expect(html).toContain("<strong>billing-worker</strong> created");
  });
});
