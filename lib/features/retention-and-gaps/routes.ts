import { appendAudit } from "../../auth/audit";
import { type DeclaredRoute, route } from "../../auth/declare-route";
import { effectsStore } from "../../console/effects-store";
import { applyAdvice, previewAdvice } from "./advice-apply";
import { toAdviceOptions } from "./advice-query";
import { getRetentionAdvice } from "./advise-retention";
import { applyRetention } from "./apply";
import {
  advice,
  adviceApplyBody,
  advicePreview,
  adviceQuery,
  applyResultView,
  DEFAULT_RETENTION_RUNS,
  planView,
  retentionQuery,
  retentionSettingsBody,
  retentionSettingsView,
  retentionView,
  settingsUpdateView,
} from "./contract";
import { gapsQuery, gapsResponse } from "./gaps-contract";
import { resolveGapsQuery } from "./gaps-query";
import { getGaps } from "./get-gaps";
import { getRetention, getRetentionPlan, getRetentionSettings } from "./get-retention";
import { updateRetentionSettings } from "./settings";

/** What the platform check names when a tenant's admin tries to change it: the partitions hold every tenant's effects. */
const RETENTION = "retention";

/**
 * A tenant token always gets its own tenant (per-effect gaps from the effects table): the rollups
 * have no tenant dimension, so their fleet-wide numbers are for platform tokens only.
 */
export const gapsRoute = route({
  method: "GET",
  path: "/api/v1/gaps",
  role: "viewer",
  summary: "Redelivery gap histograms, percentiles, gaps per day and the latest late duplicates (viewer)",
  query: gapsQuery,
  response: gapsResponse,
  errors: [400, 401, 429, 503, 504],
  handler: ({ scope, query }) => getGaps(scope, resolveGapsQuery(query)),
});

export const retentionRoute = route({
  method: "GET",
  path: "/api/v1/retention",
  role: "viewer",
  summary:
    "The Retention page's data: partitions, settings, live workers, plan, the last runs (viewer; a tenant token gets the settings and its own largest gap, plan null)",
  query: retentionQuery,
  response: retentionView,
  errors: [400, 401, 429, 503, 504],
  handler: ({ scope, query }) => getRetention(scope, { runs: query.runs ?? DEFAULT_RETENTION_RUNS }),
});

export const retentionPlanRoute = route({
  method: "GET",
  path: "/api/v1/retention/plan",
  role: "viewer",
  summary: "What the partition manager would do now, and the guard that keeps each partition (viewer; platform tokens)",
  response: planView,
  errors: [401, 403, 429, 503, 504],
  // The read refuses a tenant itself, naming what it withholds (row counts and sizes sum every tenant's effects).
  handler: ({ scope }) => getRetentionPlan(scope),
});

export const applyRetentionRoute = route({
  method: "POST",
  path: "/api/v1/retention/apply",
  role: "admin",
  platform: RETENTION,
  summary:
    "One maintenance run now: premake, detach concurrently, drop, index closed partitions concurrently (platform admin; audited)",
  response: applyResultView,
  errors: [401, 403, 409, 429, 503, 504],
  handler: ({ principal, ip }) =>
    applyRetention({
      actor: `api:${principal.actor}`,
      trigger: "api",
      audit: (tx, entry) => appendAudit(tx, { principal, tenantId: null, ip, ...entry }),
    }),
});

export const getRetentionSettingsRoute = route({
  method: "GET",
  path: "/api/v1/retention/settings",
  role: "viewer",
  summary: "Retention, partition interval and premake count (viewer)",
  response: retentionSettingsView,
  errors: [401, 429, 503],
  handler: () => getRetentionSettings(),
});

/** Lowering the retention below a live worker's retry window answers 409 unless { force: true, reason }. */
export const updateRetentionSettingsRoute = route({
  method: "PUT",
  path: "/api/v1/retention/settings",
  role: "admin",
  platform: RETENTION,
  summary:
    "Change the retention settings (platform admin; audited). Below a live worker's retry window: 409 unless force with a reason",
  body: retentionSettingsBody,
  response: settingsUpdateView,
  errors: [400, 401, 403, 409, 413, 429, 503],
  handler: ({ principal, ip, body }) =>
    updateRetentionSettings(body, {
      actor: principal.actor,
      audit: (tx, entry) => appendAudit(tx, { principal, tenantId: null, ip, ...entry }),
    }),
});

export const adviceRoute = route({
  method: "GET",
  path: "/api/v1/retention/advice",
  role: "viewer",
  platform: "the retention advice",
  summary: "The retention advisor's recommendation, its inputs and its reasons (viewer; platform tokens)",
  query: adviceQuery,
  response: advice,
  errors: [400, 401, 403, 429, 503, 504],
  handler: ({ query }) => getRetentionAdvice(effectsStore(), toAdviceOptions(query)),
});

export const advicePreviewRoute = route({
  method: "GET",
  path: "/api/v1/retention/advice/preview",
  role: "viewer",
  platform: "the retention advice's preview (the fleet's settings and partitions)",
  summary:
    "The advice as a change of the settings: before and after, what must change first, the plan it implies (viewer; platform tokens)",
  query: adviceQuery,
  response: advicePreview,
  errors: [400, 401, 403, 429, 501, 503, 504],
  handler: ({ query }) => previewAdvice(toAdviceOptions(query), { db: effectsStore() }),
});

/** 409 RETENTION_STALE when the advice or the settings moved since the preview, 400/409 naming the setting in the way otherwise. */
export const applyAdviceRoute = route({
  method: "POST",
  path: "/api/v1/retention/advice/apply",
  role: "admin",
  platform: RETENTION,
  summary:
    "Apply the previewed advice (platform admin; audited). 409 RETENTION_STALE when the advice or the settings moved since the preview; a refusal's issues name the setting in the way",
  query: adviceQuery,
  body: adviceApplyBody,
  response: settingsUpdateView,
  errors: [400, 401, 403, 409, 413, 429, 501, 503, 504],
  handler: ({ principal, ip, query, body }) =>
    applyAdvice(body, toAdviceOptions(query), {
      db: effectsStore(),
      actor: principal.actor,
      audit: (tx, entry) => appendAudit(tx, { principal, tenantId: null, ip, ...entry }),
    }),
});

/** The retention-and-gaps feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const retentionAndGapsRoutes: DeclaredRoute[] = [
  gapsRoute,
  retentionRoute,
  retentionPlanRoute,
  applyRetentionRoute,
  getRetentionSettingsRoute,
  updateRetentionSettingsRoute,
  adviceRoute,
  advicePreviewRoute,
  applyAdviceRoute,
];
