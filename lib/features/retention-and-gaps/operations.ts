import type { ApiOperations } from "../../api/openapi";
import {
  advice,
  adviceApplyBody,
  advicePreview,
  adviceQuery,
  applyResultView,
  planView,
  retentionQuery,
  retentionSettingsBody,
  retentionSettingsView,
  retentionView,
  settingsUpdateView,
} from "./contract";
import { gapsQuery, gapsResponse } from "./gaps-contract";

/** The retention-and-gaps feature's operations of /api/v1, by path template and method (lib/routes/openapi.ts gathers them). */
export const retentionAndGapsOperations: ApiOperations = {
  "/api/v1/gaps": {
    get: {
      summary: "Redelivery gap histograms, percentiles, gaps per day and the latest late duplicates (viewer)",
      query: gapsQuery,
      response: gapsResponse,
      errors: [400, 401, 429, 503, 504],
    },
  },
  "/api/v1/retention": {
    get: {
      summary:
        "The Retention page's data: partitions, settings, live workers, plan, the last runs (viewer; a tenant token gets the settings and its own largest gap, plan null)",
      query: retentionQuery,
      response: retentionView,
      errors: [400, 401, 429, 503, 504],
    },
  },
  "/api/v1/retention/plan": {
    get: {
      summary: "What the partition manager would do now, and the guard that keeps each partition (viewer; platform tokens)",
      response: planView,
      errors: [401, 403, 429, 503, 504],
    },
  },
  "/api/v1/retention/apply": {
    post: {
      summary:
        "One maintenance run now: premake, detach concurrently, drop, index closed partitions concurrently (platform admin; audited)",
      response: applyResultView,
      errors: [401, 403, 409, 429, 503, 504],
    },
  },
  "/api/v1/retention/settings": {
    get: {
      summary: "Retention, partition interval and premake count (viewer)",
      response: retentionSettingsView,
      errors: [401, 429, 503],
    },
    put: {
      summary:
        "Change the retention settings (platform admin; audited). Below a live worker's retry window: 409 unless force with a reason",
      body: retentionSettingsBody,
      response: settingsUpdateView,
      errors: [400, 401, 403, 409, 413, 429, 503],
    },
  },
  "/api/v1/retention/advice": {
    get: {
      summary: "The retention advisor's recommendation, its inputs and its reasons (viewer; platform tokens)",
      query: adviceQuery,
      response: advice,
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/retention/advice/preview": {
    get: {
      summary:
        "The advice as a change of the settings: before and after, what must change first, the plan it implies (viewer; platform tokens)",
      query: adviceQuery,
      response: advicePreview,
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/retention/advice/apply": {
    post: {
      summary:
        "Apply the previewed advice (platform admin; audited). 409 RETENTION_STALE when the advice or the settings moved since the preview; a refusal's issues name the setting in the way",
      query: adviceQuery,
      body: adviceApplyBody,
      response: settingsUpdateView,
      errors: [400, 401, 403, 409, 413, 429, 503, 504],
    },
  },
};
