import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import type { WorkersResponse } from "@/lib/features/workers/contract";
import { getWorkers } from "@/lib/features/workers/get-workers";

// Scraped live on every request: the counters move and a worker may have died since.
export const dynamic = "force-dynamic";

const TENANT_WITHHELD =
  "Workers are not shown to a tenant: their addresses are internal and their counters count every tenant's work.";

const UNCONFIGURED_HINT =
  "WORKER_METRICS_URLS is not set: `npm start` sets it to its demo workers' /metrics URLs, or set it to a comma-separated list of your workers' /metrics URLs.";

/**
 * GET /api/v1/workers → WorkersResponse (lib/features/workers/workers-types.ts); a malformed
 * WORKER_METRICS_URLS → 500 CONFIG_INVALID naming the entry. A tenant token gets no worker at
 * all, and `withheld` saying why: a worker's address is internal and its counters are every
 * tenant's (GET /api/v1/workers/{n}/metrics answers it 403).
 */
export const GET = withAuth("viewer", async (_request, { scope }) => {
  if (!scope.platform) return jsonResponse({ workers: [], withheld: TENANT_WITHHELD } satisfies WorkersResponse);
  const { configured, workers } = await getWorkers();
  const body: WorkersResponse = configured ? { workers } : { workers: [], hint: UNCONFIGURED_HINT };
  return jsonResponse(body);
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
