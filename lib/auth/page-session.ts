import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { ConsoleError } from "../console/errors";
import { type Principal, type Role, roleAtLeast } from "./auth-types";
import { authenticate, databaseError } from "./authenticate";
import { safeNextPath } from "./safe-next";
import { Scope } from "./scope";
import { SESSION_COOKIE } from "./session";

/** The signed-in principal, or null (no redirect): for the shell, which renders on the login page too. */
export async function currentPageSession(): Promise<Principal | null> {
  const value = (await cookies()).get(SESSION_COOKIE)?.value;
  if (!value) return null;
  return (await authenticate(new Headers({ cookie: `${SESSION_COOKIE}=${value}` })))?.principal ?? null;
}

/**
 * For server components: the signed-in principal, or a redirect to /login (back here afterwards).
 * With `role`, a principal below it is sent to /login with the reason shown.
 */
async function requirePageSession(role?: Role): Promise<Principal> {
  const back = safeNextPath((await headers()).get("x-onceboard-path"));
  const next = back ? `next=${encodeURIComponent(back)}` : "";
  // Fails closed: when the session cannot be checked the page shows the outage, never its data.
  const principal = await currentPageSession().catch((error: unknown) => {
    if (databaseError(error) instanceof ConsoleError) redirect(`/login?reason=unavailable${next ? `&${next}` : ""}`);
    throw error;
  });
  if (!principal) redirect(`/login${next ? `?${next}` : ""}`);
  if (role && !roleAtLeast(principal.role, role)) redirect(`/login?reason=role&needs=${role}${next ? `&${next}` : ""}`);
  return principal;
}

/** What a page reads with: who is signed in, and the scope every read model takes. */
export interface PageScope {
  principal: Principal;
  scope: Scope;
}

/**
 * The one way a page gets a Scope: requirePageSession (a redirect to /login without a session, or
 * when it cannot be checked), and the scope of its principal, as withAuth hands it to route handlers.
 */
export async function requirePageScope(role?: Role): Promise<PageScope> {
  const principal = await requirePageSession(role);
  return { principal, scope: Scope.ofPrincipal(principal) };
}
