import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withEachEngine } from "./engine-suite";
import type { EngineDatabase } from "./engines";
import { testEffects } from "./helpers";

/**
 * Several processes interleave claims, duplicates, takeovers and failures on overlapping keys, two
 * of them coalescing and one not, for a few seconds. Then every key is settled once more, and each
 * caller's answer is checked against what that key stored: exactly one caller per key ran the step
 * to its stored outcome, every duplicate got that outcome, every failure got its own error, and a
 * body that outlived its lease was either the stored run or told LeaseLostError.
 */
let db: EngineDatabase;

const WORKER = path.join(import.meta.dirname, "interleave-worker.ts");

interface Answer {
  key: string;
  runId: string;
  plan: "return" | "throw" | "outlive";
  ran: boolean;
  answer: "ran" | "duplicate" | "abandoned" | "error";
  outcome?: { runId: string } | null;
  error?: string;
  message?: string;
}

function runWorker(coalesce: boolean): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", WORKER], {
      cwd: path.resolve(import.meta.dirname, "../../.."),
      env: {
        ...process.env,
        INTERLEAVE_DATABASE_URL: db.url,
        INTERLEAVE_SECONDS: "3",
        INTERLEAVE_COALESCE: coalesce ? "1" : "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`interleave worker exited ${code}: ${err}`));
      else
        resolve(
          out
            .split("\n")
            .filter((l) => l.trim())
            .map((l) => JSON.parse(l) as Answer),
        );
    });
  });
}

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  () =>
    describe("claims, duplicates, takeovers and failures of overlapping keys from several processes", () => {
      it("run each key's step to one stored outcome and give every caller its own right answer", async () => {
        const answers = (await Promise.all([runWorker(true), runWorker(true), runWorker(false)])).flat();
        const keys = [...new Set(answers.map((a) => a.key))];
        expect(keys.length).toBeGreaterThan(10);

        // Settle every key once more (a key whose last attempt failed is retried here), coalesced.
        const effects = testEffects(db, { wait: "10s", coalesce: true });
        const settled = await Promise.all(
          keys.map((key) =>
            effects.once({ tenant: "interleave", key, jobType: "interleave" }, () => ({ runId: `final:${key}` })),
          ),
        );
        await effects.close();
        const stored = new Map(keys.map((key, i) => [key, settled[i]?.outcome as { runId: string }]));
        const rows = (
          await db.rows<{ key: string; outcome: unknown; status: string }>({
            pg: "SELECT key, outcome, status FROM effects WHERE tenant_id = 'interleave'",
            mysql: "SELECT `key`, outcome, status FROM effects WHERE tenant_id = 'interleave'",
          })
        ).map((r) => ({
          ...r,
          outcome: (typeof r.outcome === "string" ? JSON.parse(r.outcome) : r.outcome) as { runId: string },
        }));
        expect(rows.length).toBe(keys.length);
        for (const row of rows) {
          expect(row.status).toBe("completed");
          expect(row.outcome).toEqual(stored.get(row.key));
        }

        const wrong: string[] = [];
        const ranPerKey = new Map<string, number>();
        for (const [i, key] of keys.entries()) if (settled[i]?.result === "ran") ranPerKey.set(key, 1);
        for (const a of answers) {
          const outcome = stored.get(a.key);
          if (a.answer === "ran") {
            ranPerKey.set(a.key, (ranPerKey.get(a.key) ?? 0) + 1);
            if (!a.ran || a.plan === "throw" || a.outcome?.runId !== a.runId || outcome?.runId !== a.runId)
              wrong.push(`ran but not its stored run: ${JSON.stringify(a)}`);
          } else if (a.answer === "duplicate") {
            if (a.ran || JSON.stringify(a.outcome) !== JSON.stringify(outcome))
              wrong.push(`duplicate with another outcome: ${JSON.stringify(a)}`);
          } else if (a.answer === "error") {
            const ownFailure = a.plan === "throw" && a.ran && a.message === `planned failure ${a.runId}`;
            const lostLease = a.error === "LEASE_LOST" && a.ran && a.plan !== "throw" && outcome?.runId !== a.runId;
            const waitedOut = a.error === "EFFECT_IN_FLIGHT" && !a.ran;
            if (!ownFailure && !lostLease && !waitedOut) wrong.push(`unexpected error: ${JSON.stringify(a)}`);
          } else {
            wrong.push(`unexpected answer: ${JSON.stringify(a)}`);
          }
        }
        expect(wrong).toEqual([]);
        // Exactly one run per key became the stored outcome (the final sweep's included).
        expect([...ranPerKey.entries()].filter(([, n]) => n !== 1)).toEqual([]);
        expect(ranPerKey.size).toBe(keys.length);
        // The run really interleaved: failures, takeovers' lost leases and duplicates all happened.
        const kinds = new Set(answers.map((a) => (a.answer === "error" ? a.error : a.answer)));
        for (const k of ["ran", "duplicate", "LEASE_LOST"]) expect(kinds).toContain(k);
        expect(answers.some((a) => a.plan === "throw" && a.answer === "error")).toBe(true);
      }, 60_000);
    }),
  { poolSize: 8 },
);
