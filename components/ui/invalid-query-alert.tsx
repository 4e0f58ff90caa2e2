import type { InvalidPageQuery } from "@/lib/api/page-query-types";
import { ErrorState } from "./error-state";

/**
 * Beside a page's form when its URL did not parse: the API's 400 (what is wrong, and its code),
 * announced (role=alert). The form above keeps what was typed, so it is corrected there; `hint`
 * null where the page shows this reader no form.
 */
export function InvalidQueryAlert({
  invalid,
  hint = "Correct it in the form above and apply it again.",
}: {
  invalid: Pick<InvalidPageQuery, "message" | "code">;
  hint?: string | null;
}) {
  return (
    <div data-testid="invalid-query">
      <ErrorState
        title="This link has an invalid filter"
        message={invalid.message}
        code={invalid.code}
        hint={hint ?? undefined}
      />
    </div>
  );
}
