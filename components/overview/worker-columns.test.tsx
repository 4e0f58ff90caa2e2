import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { DataTable } from "@/components/ui/data-table";
import type { WorkerStatus } from "@/lib/features/workers/contract";
import { WORKER_COLUMNS } from "./worker-columns";

/** A restart count the workers recorded is shown; one that is not known is "–", never 0. */
describe("a worker's restarts", () => {
  const worker: WorkerStatus = {
    url: "http://127.0.0.1:9464/metrics",
    up: true,
    scrapedAt: "2026-12-03T19:00:00.000Z",
    claims: 12_345,
    duplicateSuppressions: 1,
    redeliveries: 2,
    uncaughtViolations: 0,
    workerName: "billing-0",
    restarts: 8,
  };
  const restartsCell = (w: WorkerStatus) =>
    /data-testid="worker-restarts"[^>]*>([^<]*)</.exec(
      renderToStaticMarkup(<DataTable columns={WORKER_COLUMNS} rows={[w]} rowKey={(row) => row.url} caption="Workers" />),
    )?.[1];

  it("shows the count the worker recorded, and – when it is not known, never 0", () => {
    expect(restartsCell(worker)).toBe("8");
    expect(restartsCell({ ...worker, restarts: null })).toBe("–");
    expect(restartsCell({ ...worker, workerName: null, restarts: null })).toBe("–");
    expect(restartsCell({ ...worker, restarts: 0 })).toBe("0");
  });
});
