import { ApiClientError } from "../api/fetch-json";

/** How often live pages ask again (the stale banner and the error hints quote it). */
export const REFRESH_MS = 15_000;

interface DescribedError {
  title: string;
  message: string;
  code?: string;
  hint?: string;
}

/** An API error as a title, message, code and hint, for `what` ("the overview", "the workers"). */
export function describeApiError(error: unknown, what: string): DescribedError {
  const failed = `${what[0]?.toUpperCase() ?? ""}${what.slice(1)} could not be loaded`;
  if (error instanceof ApiClientError) {
    if (error.code === "DATABASE_UNAVAILABLE" || error.code === "DATABASE_NOT_CONFIGURED") {
      return {
        title: "The database cannot be reached",
        message: error.message,
        code: error.code,
        hint: `Check that the database the message names is running: PostgreSQL at the console's DATABASE_URL, or the effects store at EFFECTS_DATABASE_URL. This page asks again every ${REFRESH_MS / 1000} seconds.`,
      };
    }
    if (error.code === "QUERY_TIMEOUT")
      return { title: "The database is too slow to answer", message: error.message, code: error.code };
    if (error.code === "METRICS_SOURCE_FAILED")
      return {
        title: "Prometheus did not answer",
        message: error.message,
        code: error.code,
        hint: "Check PROMETHEUS_URL, or unset it to chart from the PostgreSQL rollups.",
      };
    if (error.code === "NOT_ON_THIS_EFFECTS_STORE")
      return {
        title: "Not available with a MySQL effects store",
        message: error.message,
        code: error.code,
        hint: "The console reads the effects from EFFECTS_DATABASE_URL's MySQL or MariaDB server. Releases (one or in bulk), retention settings changes and the retention advice's preview and Apply work there; reconciliation does not. docs/operations.md says why.",
      };
    if (error.code === "INVALID_INPUT")
      return { title: "This view's address is invalid", message: error.message, code: error.code };
    return { title: failed, message: error.message, code: error.code };
  }
  return { title: failed, message: error instanceof Error ? error.message : String(error) };
}
