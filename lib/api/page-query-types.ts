/**
 * A page's URL its API refuses, as the page shows it: the values as they were typed (the page's
 * form holds them again, so the mistake can be corrected in place) and the API's 400, beside it
 * (components/ui/invalid-query-alert.tsx). Made by invalidPageQuery() in page-queries.ts.
 */
export interface InvalidPageQuery {
  typed: Record<string, string>;
  message: string;
  code: string;
}
