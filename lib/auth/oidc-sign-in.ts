import { getPrisma, type PrismaClient } from "../db/prisma";
import { appendAudit } from "./audit";
import type { Principal } from "./auth-types";
import { authorizationRequest, exchangeCode, type OidcSettings, type VerifiedIdToken } from "./oidc-client";
import { OIDC_FLOW_TTL_SECONDS, type OidcFlow, readFlowCookie } from "./oidc-flow";
import { decideRole, groupsOfClaim, loadRoleMapping } from "./oidc-roles";
import { openOidcSession } from "./session";

/**
 * Single sign-on, start to session: the start sends the browser to the identity provider with a
 * fresh flow (lib/auth/oidc-flow.ts); the callback checks the provider's answer against it
 * (lib/auth/oidc-client.ts), maps the person's groups to one role in one scope
 * (lib/auth/oidc-roles.ts) and opens a console session for them (lib/auth/session.ts). Every
 * callback is audited as `login.oidc`, refused ones too; a person with no mapped role gets no
 * session at all.
 */
export async function startOidcSignIn(
  settings: OidcSettings,
  next: string,
  now = Date.now(),
): Promise<{ location: URL; flow: OidcFlow }> {
  const { url, checks } = await authorizationRequest(settings);
  return { location: url, flow: { ...checks, next, expiresAt: now + OIDC_FLOW_TTL_SECONDS * 1000 } };
}

type OidcSignInResult =
  | { kind: "signed-in"; principal: Principal; cookieValue: string; expiresAt: Date; next: string }
  | { kind: "no-access"; reason: "no-role" | "two-scopes" }
  /** `reason` is for the audit log and the server's log, not for the browser. */
  | { kind: "refused"; reason: string };

export async function completeOidcSignIn(
  settings: OidcSettings,
  input: { search: string; cookieHeader: string | null; ip: string | null },
  db: PrismaClient = getPrisma(),
  now = new Date(),
): Promise<OidcSignInResult> {
  const result = await signIn(settings, input, db, now);
  await appendAudit(db, {
    principal: result.kind === "signed-in" ? result.principal : null,
    action: "login.oidc",
    tenantId: result.kind === "signed-in" ? result.principal.tenantId : null,
    result: result.kind === "signed-in" ? "ok" : "refused",
    detail: result.kind === "signed-in" ? null : result.detail,
    ip: input.ip,
  });
  if (result.kind === "signed-in") return result;
  return result.kind === "no-access" ? { kind: "no-access", reason: result.reason } : { kind: "refused", reason: result.reason };
}

type Attempt =
  | Extract<OidcSignInResult, { kind: "signed-in" }>
  | { kind: "no-access"; reason: "no-role" | "two-scopes"; detail: Record<string, string | string[]> }
  | { kind: "refused"; reason: string; detail: Record<string, string> };

async function signIn(
  settings: OidcSettings,
  input: { search: string; cookieHeader: string | null; ip: string | null },
  db: PrismaClient,
  now: Date,
): Promise<Attempt> {
  const flow = readFlowCookie(input.cookieHeader, now.getTime());
  if (!flow) {
    const reason = "no sign-in in progress in this browser (the flow cookie is missing, stale or forged)";
    return { kind: "refused", reason, detail: { reason } };
  }
  let verified: VerifiedIdToken;
  try {
    verified = await exchangeCode(settings, input.search, flow, now);
  } catch (error) {
    const reason = `the identity provider's answer failed its checks: ${describeFailure(error)}`;
    return { kind: "refused", reason, detail: { reason } };
  }
  const groups = groupsOfClaim(verified.claims[settings.groupsClaim]);
  const decision = decideRole(groups, loadRoleMapping());
  if (decision.kind === "no-role") {
    return {
      kind: "no-access",
      reason: "no-role",
      detail: {
        reason: `no group in the ${settings.groupsClaim} claim maps to a role`,
        subject: verified.subject,
        groups: groups.slice(0, 50),
      },
    };
  }
  if (decision.kind === "two-scopes") {
    return {
      kind: "no-access",
      reason: "two-scopes",
      detail: { reason: "the groups grant roles in more than one scope", subject: verified.subject, scopes: decision.scopes },
    };
  }
  const actor = actorOf(verified);
  const session = await openOidcSession(
    {
      issuer: verified.issuer,
      subject: verified.subject,
      actor,
      role: decision.grant.role,
      tenantId: decision.grant.tenantId,
      idTokenExpiresAt: verified.expiresAt,
      idToken: verified.idToken,
    },
    { ip: input.ip },
    db,
    now,
  );
  return {
    kind: "signed-in",
    principal: {
      tokenId: null,
      oidcSubject: verified.subject,
      actor,
      tenantId: decision.grant.tenantId,
      role: decision.grant.role,
    },
    cookieValue: session.cookieValue,
    expiresAt: session.expiresAt,
    next: flow.next,
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
const CONTROL = /[\u0000-\u001f\u007f]/g;

/** "Alice Admin <alice@example.com> (oidc:alice)": who the audit log and the session badge name. */
function actorOf(verified: Pick<VerifiedIdToken, "subject" | "claims">): string {
  const text = (value: unknown) => (typeof value === "string" ? value.replace(CONTROL, "").trim().slice(0, 120) : "");
  const name = text(verified.claims.name) || text(verified.claims.preferred_username);
  const email = text(verified.claims.email);
  const label = [name, email && email !== name ? `<${email}>` : ""].filter(Boolean).join(" ");
  const subject = `oidc:${text(verified.subject)}`;
  return label ? `${label} (${subject})` : subject;
}

/** openid-client's error, its code and its cause's message (which names the check: state, nonce, exp, …). */
function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { error?: unknown }).error ?? (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}${typeof code === "string" ? ` (${code})` : ""}`.slice(0, 500);
}
