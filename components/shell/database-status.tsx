"use client";

import { useQuery } from "@tanstack/react-query";
import type { Health } from "@/lib/features/workers/health-contract";
import { fetchJson } from "../api/fetch-json";

/** A small live indicator of whether the console can reach PostgreSQL and a MySQL effects store (polls /api/v1/health). */
export function DatabaseStatus() {
  const health = useQuery({
    queryKey: ["health"],
    queryFn: ({ signal }) => fetchJson<Health>("/api/v1/health", signal),
    refetchInterval: 30_000,
    retry: false,
  });
  const state = health.isPending ? "checking" : health.isError ? "down" : "up";
  return (
    <div className="db-status" data-state={state} role="status" aria-live="polite">
      <span className="db-status-dot" aria-hidden="true" />
      <span>
        {state === "checking" && "Checking database…"}
        {state === "down" && "Database unreachable"}
        {state === "up" && health.data && (
          <>
            PostgreSQL
            <span className="muted"> · {Math.round(health.data.database.latencyMs)} ms</span>
            {health.data.effectsStore && (
              <>
                {" · effects on MySQL"}
                <span className="muted"> · {Math.round(health.data.effectsStore.latencyMs)} ms</span>
              </>
            )}
          </>
        )}
      </span>
    </div>
  );
}
