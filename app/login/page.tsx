import type { Metadata } from "next";
import { LoginCode } from "@/components/auth/login-code";
import { PageHeader } from "@/components/ui/page-header";
import { nextPathOrDefault } from "@/lib/auth/safe-next";

export const metadata: Metadata = { title: "Sign in" };

const REASONS: Record<string, string> = {
  role: "Your token's role cannot open that page.",
  unavailable: "The database cannot be reached, so sign-in cannot be checked right now.",
  "logout-unavailable":
    "Signed out of this browser, but the database could not be reached to end the session on the server: sign out again once it is back.",
};

/** Sign in with an API token (or a one-time link: /login#code=…); the session is an httpOnly cookie. */
export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const next = nextPathOrDefault(Array.isArray(params.next) ? params.next[0] : params.next);
  const reason = typeof params.reason === "string" ? REASONS[params.reason] : undefined;
  return (
    <>
      <PageHeader
        title="Sign in"
        description={
          <>
            Paste an Onceboard token. <code>npm run token -- create</code> makes one.
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
