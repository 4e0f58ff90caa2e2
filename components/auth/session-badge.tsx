import type { SessionInfo } from "@/lib/auth/auth-types";

/** Who is signed in, and the sign-out button (a same-origin form POST). */
export function SessionBadge({ session }: { session: SessionInfo | null }) {
  if (!session) return null;
  return (
    <div className="session-badge" data-testid="session-badge">
      <span className="session-actor" title={session.actor}>
        {session.actor}
      </span>
      <span className="muted">
        {session.role} · {session.tenantId ?? "platform"}
      </span>
      <form method="post" action="/api/auth/logout">
        <button type="submit" className="button-quiet">
          Sign out
        </button>
      </form>
    </div>
  );
}
