import type { Metadata } from "next";
import { KeysView } from "@/components/keys/keys-view";
import { PageHeader } from "@/components/ui/page-header";
import { ErrorState } from "@/components/ui/states";
import { ApiError } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { requirePageSession } from "@/lib/auth/page-session";
import { keysPageParams } from "@/lib/console/keys-params";

export const metadata: Metadata = { title: "Keys" };

/** "Did order X run twice?": search a tenant's effect keys by fragment, open one, release a stuck claim. */
export default async function KeysPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const session = await requirePageSession("viewer");
  const raw = new URLSearchParams();
  for (const [name, value] of Object.entries(await searchParams)) {
    if (typeof value === "string") raw.set(name, value);
    else if (Array.isArray(value) && value.length > 0) raw.set(name, value[value.length - 1]!);
  }
  let params: ReturnType<typeof keysPageParams.parse>;
  try {
    params = parseSearchParams(keysPageParams, raw);
  } catch (error) {
    const message = error instanceof ApiError ? error.message : "invalid query";
    return (
      <>
        <PageHeader title="Keys" description="Look up an effect key: did it run twice?" />
        <ErrorState title="This link has an invalid filter" message={message} code="INVALID_INPUT" />
      </>
    );
  }
  // A tenant token always searches its own tenant; a platform token picks one.
  const tenant = session.tenantId ?? params.tenant;
  return (
    <>
      <PageHeader
        title="Keys"
        description="Search a tenant's effect keys by any fragment (an order id finds every step of that order), then open one."
      />
      <KeysView
        key={raw.toString()}
        params={{ ...params, tenant }}
        session={{ role: session.role, tenantId: session.tenantId, actor: session.actor }}
      />
    </>
  );
}
