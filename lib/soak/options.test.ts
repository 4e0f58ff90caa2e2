import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseSoakArgs, SoakUsageError } from "./options";
import { planDeliveries } from "./producer";
import { bookkeepingLoss, summaryLine } from "./report";
import { emptyPoolStats } from "./supervisor";
import type { SoakVerification } from "./verify";
import { violationsLost } from "./verify";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("soak options", () => {
  it("defaults to the issue's spec: 200,000 deliveries, 30% duplicates, 5% of runs killed", () => {
    const o = parseSoakArgs([]);
    expect(o).toMatchObject({ deliveries: 200_000, duplicates: 0.3, kills: 0.05, keep: false, synchronousCommit: false });
    expect(parseSoakArgs(["--deliveries", "20000"]).deliveries).toBe(20_000);
    expect(o.faults).toBe("none");
    expect(o.broker).toBe("pg-boss");
    expect(parseSoakArgs(["--broker", "rabbitmq"]).broker).toBe("rabbitmq");
    expect(parseSoakArgs(["--broker", "nats"]).broker).toBe("nats");
    expect(o.store).toBe("postgres");
    expect(parseSoakArgs(["--store", "mariadb"]).store).toBe("mariadb");
    const proxied = parseSoakArgs(["--faults", "proxy", "--fault-rates", "reply-lost=0.01,latency-ms=0"]);
    expect(proxied.faults).toBe("proxy");
    expect(proxied.faultRates).toMatchObject({ replyLost: 0.01, latencyMaxMs: 0, resetInTransaction: 0.002 });
  });

  it("refuses bad input with one line naming the flag", () => {
    expect(() => parseSoakArgs(["--deliveries", "banana"])).toThrow(SoakUsageError);
    expect(() => parseSoakArgs(["--deliveries", "banana"])).toThrow(/--deliveries must be a whole number.*"banana"/);
    expect(() => parseSoakArgs(["--deliveries", "-5"])).toThrow(/--deliveries/);
    expect(() => parseSoakArgs(["--deliveries", "12.5"])).toThrow(/--deliveries/);
    expect(() => parseSoakArgs(["--kills", "2"])).toThrow(/--kills must be a number from 0 to 0.5/);
    expect(() => parseSoakArgs(["--workers", "0"])).toThrow(/--workers/);
    expect(() => parseSoakArgs(["--frob"])).toThrow(/Unknown option '--frob'/);
    expect(() => parseSoakArgs(["--faults", "chaos"])).toThrow(/--faults must be none or proxy/);
    expect(() => parseSoakArgs(["--broker", "kafka"])).toThrow(
      /--broker must be one of pg-boss, bullmq, rabbitmq, nats \(got "kafka"\)/,
    );
    expect(() => parseSoakArgs(["--fault-rates", "reset=0.1"])).toThrow(/--fault-rates needs --faults proxy/);
    expect(() => parseSoakArgs(["--store", "oracle"])).toThrow(/--store must be one of postgres, mariadb \(got "oracle"\)/);
    expect(() => parseSoakArgs(["--store", "mariadb", "--faults", "proxy"])).toThrow(
      /--faults proxy speaks PostgreSQL's protocol/,
    );
    expect(() => parseSoakArgs(["--faults", "proxy", "--fault-rates", "reset=2"])).toThrow(/reset must be a number from 0 to 1/);
    expect(() => parseSoakArgs(["--faults", "proxy", "--fault-rates", "boom=1"])).toThrow(/unknown rate "boom"/);
  });

  it("`npm run soak -- --deliveries banana` prints one clear line and exits non-zero before starting anything", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/soak.ts"), "--deliveries", "banana"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trimEnd().split("\n")).toEqual([
      'onceboard: soak: --deliveries must be a whole number from 100 to 10000000 (got "banana")',
    ]);
  });
});

describe("the soak's plan and summary", () => {
  it("splits the deliveries into orders and three kinds of duplicates that add up", () => {
    for (const n of [100, 20_000, 200_000, 12_347]) {
      const p = planDeliveries(n, 0.3);
      expect(p.orders + p.concurrent + p.republished + p.late).toBe(n);
      expect(p.deliveries - p.orders).toBe(Math.round(n * 0.3));
      expect(Math.abs(p.concurrent - p.late)).toBeLessThanOrEqual(2);
    }
  });

  it("prints the last line in exactly the agreed form", () => {
    expect(
      summaryLine({
        deliveries: 20_000,
        suppressed: 5_800,
        killed: 1_050,
        doubleEffects: 0,
        lost: 0,
        violationsLost: 0,
        suppressionsLost: 12,
        largestLossPerKill: 9,
        faults: {
          replyLost: { commit: 40, claim: 30, complete: 20 },
          resetInTransaction: 50,
          stalledReply: 7,
          delayedPacket: 1234,
          connections: 300,
        },
      }),
    ).toBe(
      "soak deliveries=20000 duplicates_suppressed=5800 killed=1050 double_effects=0 lost=0 violations_lost=0 suppressions_lost=12 largest_loss_per_kill=9 faults_reply_lost=90 faults_reset=50 faults_stall=7 faults_delayed=1234",
    );
  });

  it("counts a violation lost when its key has fewer rows than times it came back to a handler", () => {
    const seen = { "acme\u0001mark-paid:o-1": 2, "acme\u0001mark-paid:o-2": 1 };
    expect(violationsLost(seen, { "acme\u0001mark-paid:o-1": 2, "acme\u0001mark-paid:o-2": 1 })).toBe(0);
    // A row on another tenant's same key does not stand in for this one's.
    expect(violationsLost(seen, { "acme\u0001mark-paid:o-1": 1, "globex\u0001mark-paid:o-2": 1 })).toBe(2);
    // A row whose handler died before it could count it is not a loss.
    expect(violationsLost({}, { "acme\u0001mark-paid:o-3": 1 })).toBe(0);
  });

  it("measures the bookkeeping lost against the handlers' ground truth, never below 0", () => {
    const w = emptyPoolStats();
    w.unflushed = { atMost: 40, atLeast: 30, largestAtMost: 25 };
    w.atStop = { unflushedDuplicateClaims: 3, killedAtDeadline: 1 };
    w.droppedDuplicateCounts = 2;
    const v = { recordedSuppressions: 965, recordedDuplicateCounts: 1003 } as SoakVerification;
    expect(bookkeepingLoss(1000, v, w)).toEqual({
      duplicateClaims: 1000,
      suppressionsLost: 35,
      // More recorded than seen (a rerun transaction counts its duplicate twice): no loss, not -3.
      duplicateCountsLost: 0,
      largestLossPerKill: 25,
      unflushedAtMost: 40,
      unflushedAtLeast: 30,
      unflushedAtStop: 3,
      killedAtStopDeadline: 1,
      droppedDuplicateCounts: 2,
    });
  });
});
