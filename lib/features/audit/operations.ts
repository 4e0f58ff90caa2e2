import type { ApiOperations } from "../../api/openapi";
import { auditExportQuery, auditIntegrityView, auditQuery, auditResponse } from "./contract";

/** The audit feature's operations of /api/v1, by path template and method (lib/routes/openapi.ts gathers them). */
export const auditOperations: ApiOperations = {
  "/api/v1/audit": {
    get: {
      summary: "The audit log, newest first (admin; a tenant admin sees its tenant's rows)",
      query: auditQuery,
      response: auditResponse,
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/audit/export": {
    get: {
      summary:
        "The filtered audit log as a file, streamed newest first: CSV (formula-leading cells neutralised) or NDJSON (admin; the export is itself audited)",
      query: auditExportQuery,
      response: "text",
      text: {
        mediaTypes: ["text/csv", "application/x-ndjson"],
        description: "The rows, one per line, up to the newest that existed when the export began",
      },
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/audit/integrity": {
    get: {
      summary:
        "Whether the audit log's hash chain holds: checked in slices from where the last check stopped, fully again hourly (admin; where it broke: platform admins)",
      response: auditIntegrityView,
      errors: [401, 403, 429, 503, 504],
    },
  },
};
