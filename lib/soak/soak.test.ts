import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findTestMariadb } from "../../test/mariadb";
import { findTestNats, findTestRabbit } from "../queues/testing/brokers";
import { findTestRedis } from "../queues/testing/redis";
import type { SoakResult } from "./run";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DELIVERIES = 20_000;
/** The other brokers' soak: small, beside pg-boss's (each takes about half a minute here). */
const BROKER_DELIVERIES = 2000;
const brokerUrls = { bullmq: await findTestRedis(), rabbitmq: await findTestRabbit(), nats: await findTestNats() };
const mariadb = await findTestMariadb();

function runSoakScript(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/soak.ts"), ...args], {
      cwd: ROOT,
      env: process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the soak (real worker processes, pg-boss, PostgreSQL)", () => {
  it(`${DELIVERIES} deliveries with duplicates, SIGKILLed workers, a PostgreSQL outage and the fault proxy: nothing applied twice, nothing lost`, {
    timeout: 20 * 60_000,
  }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-soak-test-"));
    const report = path.join(dir, "report.json");
    const { code, stdout, stderr } = await runSoakScript([
      "--deliveries",
      String(DELIVERIES),
      "--faults",
      "proxy",
      "--report",
      report,
    ]);
    const lines = stdout.trimEnd().split("\n");
    if (code !== 0) console.log(`${stdout}\n${stderr.split("\n").slice(-40).join("\n")}`);
    else console.log(lines.slice(-12).join("\n"));

    const last = lines.at(-1) ?? "";
    const m =
      /^soak deliveries=(\d+) duplicates_suppressed=(\d+) killed=(\d+) double_effects=(\d+) lost=(\d+) violations_lost=(\d+) suppressions_lost=(\d+) largest_loss_per_kill=(\d+) faults_reply_lost=(\d+) faults_reset=(\d+) faults_stall=(\d+) faults_delayed=(\d+)$/.exec(
        last,
      );
    expect(m, `last line: ${last}`).not.toBeNull();
    const [deliveries, suppressed, killed, doubleEffects, lost, violationsLost, , , repliesLost, resets, stalls, delayed] = m!
      .slice(1)
      .map(Number);
    expect(doubleEffects).toBe(0);
    expect(lost).toBe(0);
    expect(violationsLost).toBe(0);
    expect(deliveries).toBe(DELIVERIES);
    expect(killed).toBeGreaterThan(0);
    expect(suppressed).toBeGreaterThan(0);
    // Every fault of the proxy happened, between the workers and PostgreSQL, during the run.
    expect(repliesLost).toBeGreaterThan(0);
    expect(resets).toBeGreaterThan(0);
    expect(stalls).toBeGreaterThan(0);
    expect(delayed).toBeGreaterThan(0);
    expect(code).toBe(0);

    const result = JSON.parse(fs.readFileSync(report, "utf8")) as SoakResult;
    fs.rmSync(dir, { recursive: true, force: true });
    expect(result.ok).toBe(true);
    expect(result.failures).toEqual([]);
    // The kills really happened: worker processes SIGKILLed mid-handler and started again.
    expect(result.workers.kills).toBeGreaterThan(0);
    expect(result.workers.restarts).toBeGreaterThanOrEqual(result.workers.kills);
    expect(result.workers.killedRuns).toBe(killed);
    expect(result.workers.unexpectedExits).toBe(0);
    // The outage really happened: a restart of the soak's own server, or (DATABASE_URL) every
    // connection to the soak's database terminated.
    expect(result.outage).not.toBeNull();
    expect(result.outage!.kind).toBe(process.env.DATABASE_URL ? "terminate" : "restart");
    expect(result.outage!.connectionsCut).toBeGreaterThan(0);
    // The verdict in detail.
    const v = result.verification!;
    expect(v.orders).toBe(result.plan.orders);
    expect(v.captures).toBe(v.orders);
    expect(v.paid).toBe(v.orders);
    expect(v.doubleCaptures).toBe(0);
    expect(v.doubleReceipts).toBe(0);
    expect(v.doubleEntries).toBe(0);
    expect(v.unexplainedMissingReceipts).toBe(0);
    expect(v.missingReceipts).toBe(v.abandonedReceipts - v.abandonedAfterSend);
    expect(v.brokerCompleted).toBe(DELIVERIES);
    expect(Object.keys(v.rolledUpViolations).filter((c) => c !== "demo_accounting_entries_entry_key")).toEqual([]);
    // Replies lost after each kind of commit point, and stalled workers refused to complete over
    // their successors (or no stall hit a claim this time: the count may be 0, never a double effect).
    const f = result.faults!;
    expect(f.replyLost.commit).toBeGreaterThan(0);
    expect(f.replyLost.claim).toBeGreaterThan(0);
    expect(f.replyLost.complete).toBeGreaterThan(0);
    // What a SIGKILL lost of the batched bookkeeping: never more than the killed workers had not
    // flushed (their notes), and no violation at all.
    const b = result.bookkeeping!;
    expect(b.suppressionsLost).toBeLessThanOrEqual(b.unflushedAtMost);
    expect(b.largestLossPerKill).toBeLessThanOrEqual(b.unflushedAtMost);
  });
});

describe("the soak on BullMQ, RabbitMQ and NATS JetStream (the machine's servers)", () => {
  for (const broker of ["bullmq", "rabbitmq", "nats"] as const) {
    it.skipIf(!brokerUrls[broker])(
      `${broker}: ${BROKER_DELIVERIES} deliveries with duplicates, SIGKILLed workers and a PostgreSQL outage: nothing applied twice, nothing lost, every delivery acked`,
      { timeout: 10 * 60_000 },
      async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), `onceboard-soak-${broker}-`));
        const report = path.join(dir, "report.json");
        const { code, stdout, stderr } = await runSoakScript([
          "--broker",
          broker,
          "--deliveries",
          String(BROKER_DELIVERIES),
          "--report",
          report,
        ]);
        if (code !== 0) console.log(`${stdout}\n${stderr.split("\n").slice(-40).join("\n")}`);
        expect(stdout).toContain(`published deliveries completed by ${broker}`);
        const result = JSON.parse(fs.readFileSync(report, "utf8")) as SoakResult;
        fs.rmSync(dir, { recursive: true, force: true });
        expect(result.failures).toEqual([]);
        const v = result.verification!;
        expect(v.doubleEffects).toBe(0);
        expect(v.lost).toBe(0);
        expect(v.brokerCompleted).toBe(BROKER_DELIVERIES);
        expect(v.brokerFailed).toBe(0);
        expect(result.workers.kills).toBeGreaterThan(0);
        expect(result.workers.counters.suppressed).toBeGreaterThan(0);
        expect(result.outage).not.toBeNull();
        expect(code).toBe(0);
      },
    );
  }
});

describe("the soak on MariaDB (the library's MySQL store, pg-boss, the machine's MariaDB)", () => {
  it.skipIf(!mariadb)(
    `${BROKER_DELIVERIES} deliveries with duplicates, SIGKILLed workers and a simulated MariaDB restart: nothing applied twice, nothing lost, every delivery acked`,
    { timeout: 10 * 60_000 },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-soak-mariadb-"));
      const report = path.join(dir, "report.json");
      const { code, stdout, stderr } = await runSoakScript([
        "--store",
        "mariadb",
        "--deliveries",
        String(BROKER_DELIVERIES),
        "--report",
        report,
      ]);
      if (code !== 0) console.log(`${stdout}\n${stderr.split("\n").slice(-40).join("\n")}`);
      else console.log(stdout.trimEnd().split("\n").slice(-12).join("\n"));
      const last = stdout.trimEnd().split("\n").at(-1) ?? "";
      expect(last).toMatch(
        /^soak deliveries=2000 duplicates_suppressed=[1-9]\d* killed=[1-9]\d* double_effects=0 lost=0 violations_lost=0 /,
      );
      const result = JSON.parse(fs.readFileSync(report, "utf8")) as SoakResult;
      fs.rmSync(dir, { recursive: true, force: true });
      expect(result.failures).toEqual([]);
      // The effects store was MariaDB: the orders the verdict counted are MariaDB's (the soak's
      // PostgreSQL has the shop's tables empty), and so are the effects it found none stuck of.
      expect(result.machine.mariadb).toMatch(/MariaDB/);
      expect(result.database).toMatch(/^effects on MariaDB/);
      const v = result.verification!;
      expect(v.orders).toBe(result.plan.orders);
      expect(v.captures).toBe(v.orders);
      expect(v.paid).toBe(v.orders);
      expect(v.doubleEffects).toBe(0);
      expect(v.lost).toBe(0);
      expect(v.stuckEffects).toBe(0);
      expect(v.unexplainedMissingReceipts).toBe(0);
      expect(v.missingReceipts).toBe(v.abandonedReceipts - v.abandonedAfterSend);
      expect(v.brokerCompleted).toBe(BROKER_DELIVERIES);
      expect(v.brokerFailed).toBe(0);
      expect(Object.keys(v.rolledUpViolations).filter((c) => c !== "demo_accounting_entries_entry_key")).toEqual([]);
      // The kills: worker processes SIGKILLed mid-handler and started again.
      expect(result.workers.kills).toBeGreaterThan(0);
      expect(result.workers.unexpectedExits).toBe(0);
      expect(result.workers.counters.suppressed).toBeGreaterThan(0);
      // The simulated restart: the outage proxy cut the workers' connections to MariaDB.
      expect(result.outage?.kind).toBe("cut");
      expect(result.outage!.connectionsCut).toBeGreaterThan(0);
      const b = result.bookkeeping!;
      expect(b.suppressionsLost).toBeLessThanOrEqual(b.unflushedAtMost);
      expect(code).toBe(0);
    },
  );
});
