import Link from "next/link";
import { type AdminPageParams, adminPageHref } from "@/lib/features/tokens-and-sessions/admin-page-types";

/**
 * One table's pager on the Tokens & sessions page: back to its newest rows and on to its next page,
 * each link keeping the other table's place (its own cursor in the URL, `cursorKey`).
 */
export function AdminPager({
  page,
  cursorKey,
  nextCursor,
  noun,
  label,
}: {
  page: AdminPageParams;
  cursorKey: "tokensCursor" | "sessionsCursor";
  nextCursor: string | null;
  /** The rows, plural, lower case: "tokens", "sessions" (also the links' test ids). */
  noun: "tokens" | "sessions";
  label: string;
}) {
  if (!page[cursorKey] && !nextCursor) return null;
  return (
    <nav className="panel-body pager" aria-label={label}>
      {page[cursorKey] ? (
        <Link href={adminPageHref({ ...page, [cursorKey]: undefined })} data-testid={`${noun}-first`} className="button">
          Newest {noun}
        </Link>
      ) : null}
      {nextCursor ? (
        <Link href={adminPageHref({ ...page, [cursorKey]: nextCursor })} data-testid={`${noun}-next`} className="button">
          Next {noun}
        </Link>
      ) : null}
    </nav>
  );
}
