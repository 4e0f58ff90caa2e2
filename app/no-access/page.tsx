import type { Metadata } from "next";
import { PageHeader } from "@/components/ui/page-header";
import { loadConfig } from "@/lib/config";

export const metadata: Metadata = { title: "No access" };

/**
 * Where single sign-on sends a person whose groups grant no role here: no session was opened, and
 * nothing of the console is shown, only why and what to ask for.
 */
export default async function NoAccessPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const config = loadConfig();
  const claim = config.OIDC_GROUPS_CLAIM;
  const ask = config.OIDC_ROLE_MAPPING_FILE
    ? "Ask your administrator for one of the groups the console's role mapping names."
    : "Ask your administrator for a group such as onceboard-tenant-<tenant>-viewer or onceboard-platform-viewer.";
  const twoScopes = params.reason === "two-scopes";
  return (
    <>
      <PageHeader title="No access" description="The identity provider signed you in, but Onceboard did not." />
      <section className="panel login-panel" data-testid="no-access">
        <p role="alert">
          {twoScopes
            ? "Your groups give you roles in more than one tenant (or a tenant role stronger than your platform role). A console session has one scope, so none was opened."
            : `None of your groups (the "${claim}" claim) grants a role in Onceboard, so no session was opened.`}
        </p>
        <p className="muted">
          {twoScopes ? "Ask your administrator to keep you in the groups of one tenant, or to give you a platform group." : ask}
        </p>
        <p>
          <a href="/login">Back to sign-in</a>
        </p>
      </section>
    </>
  );
}
