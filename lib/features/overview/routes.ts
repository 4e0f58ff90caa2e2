import { type DeclaredRoute, route } from "../../auth/declare-route";
import { overviewQuery, overviewResponse } from "./contract";
import { getOverviewSeries } from "./get-overview-series";

/** A tenant token sees its own tenant only; Prometheus failing → 502 METRICS_SOURCE_FAILED. */
export const overviewRoute = route({
  method: "GET",
  path: "/api/v1/overview",
  role: "viewer",
  summary:
    "The Overview's series: suppressions, deliveries, violations, claim rate and latency, tenants, stuck claims, alerts (viewer; a tenant token sees its own tenant)",
  query: overviewQuery,
  response: overviewResponse,
  errors: [400, 401, 429, 502, 503, 504],
  timed: true,
  handler: ({ scope, query }) => getOverviewSeries(scope, query),
});

/** The overview feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const overviewRoutes: DeclaredRoute[] = [overviewRoute];
