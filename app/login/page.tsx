import type { Metadata } from "next";
import { LoginCode } from "@/components/auth/login-code";
import { PageHeader } from "@/components/ui/page-header";
import { oidcSettings } from "@/lib/auth/oidc-client";
import { OIDC_START_PATH } from "@/lib/auth/oidc-paths";
import { DEFAULT_AFTER_SIGN_IN, nextPathOrDefault } from "@/lib/auth/safe-next";
import type { SessionEndReason } from "@/lib/auth/session";

export const metadata: Metadata = { title: "Sign in" };

const SESSION_ENDS: Record<SessionEndReason, string> = {
  "session-revoked": "Your session was revoked (by an admin on Tokens & sessions, or by signing out). Sign in again to go on.",
  "token-revoked": "The token this session signed in with has been revoked or has expired. Sign in with another.",
  "session-expired": "Your session expired (it lasts a fixed time, and ends sooner when left idle). Sign in again.",
  "session-ended": "Your session is no longer valid on this console. Sign in again.",
};

const REASONS: Record<string, string> = {
  ...SESSION_ENDS,
  role: "Your token's role cannot open that page.",
  unavailable: "The database cannot be reached, so sign-in cannot be checked right now.",
  "logout-unavailable":
    "Signed out of this browser, but the database could not be reached to end the session on the server: sign out again once it is back.",
  "sso-refused":
    "Single sign-on did not complete: the identity provider's answer failed the console's checks (an old or reused sign-in, or an expired ID token). Sign in again.",
  "sso-unavailable": "The identity provider cannot be reached right now. Try again, or sign in with a token.",
  "sso-unconfigured": "Single sign-on is not configured on this console: sign in with a token.",
};

/**
 * Sign in through the identity provider (when OIDC_* is configured), or with an API token (or a
 * one-time link: /login#code=…); either way the session is an httpOnly cookie.
 */
export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const next = nextPathOrDefault(Array.isArray(params.next) ? params.next[0] : params.next);
  const reason = typeof params.reason === "string" && Object.hasOwn(REASONS, params.reason) ? REASONS[params.reason] : undefined;
  const sso = oidcSettings();
  const ssoHref = `${OIDC_START_PATH}${next !== DEFAULT_AFTER_SIGN_IN ? `?next=${encodeURIComponent(next)}` : ""}`;
  return (
    <>
      <PageHeader
        title="Sign in"
        description={
          <>
            {sso
              ? `Sign in with ${sso.name}, or paste an Onceboard token (for consoles and machines without it). `
              : "Paste an Onceboard token. "}
            <code>npm run token -- create</code> makes one.
          </>
        }
      />
      <section className="panel login-panel">
        {params.error ? (
          <p className="login-error" role="alert">
            Sign-in refused: the token is unknown, revoked or expired.
          </p>
        ) : null}
        {reason ? (
          <p className="login-error" role="alert">
            {reason}
          </p>
        ) : null}
        <LoginCode next={next} />
        {sso ? (
          <div className="login-sso">
            {/* A link, not a form: the start is a plain navigation to the provider. */}
            <a href={ssoHref} className="button" data-testid="sign-in-sso">
              Sign in with {sso.name}
            </a>
            <p className="muted">or with a token:</p>
          </div>
        ) : null}
        <form method="post" action="/api/auth/login" className="login-form">
          <input type="hidden" name="next" value={next} />
          <label htmlFor="token">Token</label>
          <input
            id="token"
            name="token"
            type="password"
            autoComplete="off"
            spellCheck={false}
            required
            placeholder="ob_…"
            className="input"
          />
          <button type="submit" className="button">
            Sign in
          </button>
        </form>
      </section>
    </>
  );
}
