import pg from "pg";
import { describe, expect, it } from "vitest";
import { toMs } from "../duration";
import { EffectInFlightError, EffectKeyReuseError, InvalidEffectKeyError, RetentionConfigError } from "../errors";
import { classifyError, createEffects, providerKeyFor } from "../index";
import { requestHash, validateKey } from "../keys";
import { classifyDatabaseError } from "../pg-errors";
import { isRetryable, RETRYABLE_SQLSTATES, withRetry } from "../retryable";
import { gapBucketIndex } from "../rollups";
import { uniqueViolationConstraint } from "../violations";
import { nextPollDelay } from "../wait";

describe("keys", () => {
  it("derives a stable provider key from tenant + key: safe characters, at most 255, tenant-specific", () => {
    const k = providerKeyFor("acme", "capture:order-123");
    expect(k).toBe(providerKeyFor("acme", "capture:order-123"));
    expect(k).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(k.length).toBeLessThanOrEqual(255);
    expect(k).not.toBe(providerKeyFor("globex", "capture:order-123"));
    // No ambiguity between (tenant "a:b", key "c") and (tenant "a", key "b:c").
    expect(providerKeyFor("a", "b:c")).not.toBe(providerKeyFor("a:b", "c"));
    expect(providerKeyFor("acme", "x:".padEnd(255, "y")).length).toBeLessThanOrEqual(255);
  });

  it("validates keys: non-empty, at most 255, no control characters, a step name first", () => {
    expect(validateKey("capture:order-123")).toBe("capture:order-123");
    expect(validateKey(`a:${"x".repeat(253)}`)).toHaveLength(255);
    for (const bad of ["", `a:${"x".repeat(254)}`, "a:b\tc", "a:\u009f", "order-123", ":x", "a b:c"]) {
      expect(() => validateKey(bad), JSON.stringify(bad)).toThrow(InvalidEffectKeyError);
    }
  });

  it("hashes payloads canonically (key order does not matter, values do)", () => {
    expect(requestHash({ a: 1, b: { c: 2, d: 3 } })).toBe(requestHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(requestHash({ a: 1 })).not.toBe(requestHash({ a: 2 }));
    expect(requestHash(undefined)).toBeNull();
  });
});

describe("options", () => {
  const pool = new pg.Pool();
  it("parses durations", () => {
    expect(toMs("500ms", "x")).toBe(500);
    expect(toMs("30s", "x")).toBe(30_000);
    expect(toMs("7d", "x")).toBe(7 * 86_400_000);
    expect(toMs(42, "x")).toBe(42);
    expect(() => toMs("soon" as never, "x")).toThrow(/duration/);
  });

  it("refuses a retention shorter than maxRetryWindow", () => {
    expect(() => createEffects({ db: pool, retention: "1d", maxRetryWindow: "3d" })).toThrow(RetentionConfigError);
    expect(() => createEffects({ db: pool, retention: "3d", maxRetryWindow: "3d", rollups: false })).not.toThrow();
    expect(() => createEffects({ db: {} as pg.Pool })).toThrow(
      /a pg.Pool, a PrismaClient, a mysql2\/promise pool or a mariadb pool/,
    );
  });
});

describe("retryable errors", () => {
  it("lists serialization failure, deadlock, admin shutdown and cannot-connect-now in one table", () => {
    for (const code of ["40001", "40P01", "57P01", "57P03", "08006"]) expect(isRetryable({ code })).toBe(true);
    for (const code of ["40", "08", "57P01", "57P03"]) expect(RETRYABLE_SQLSTATES).toHaveProperty(code);
    expect(isRetryable({ code: "40001" })).toBe(true);
    expect(isRetryable({ code: "ECONNRESET" })).toBe(true);
    expect(isRetryable(new Error("Connection terminated unexpectedly"))).toBe(true);
    // Prisma's adapter nests the driver's SQLSTATE.
    expect(isRetryable({ code: "P2010", meta: { driverAdapterError: { cause: { originalCode: "40P01" } } } })).toBe(true);
    expect(isRetryable({ code: "23505" })).toBe(false);
    expect(isRetryable(new Error("boom"))).toBe(false);
  });

  it("retries transient errors and gives up on others", async () => {
    let calls = 0;
    expect(
      await withRetry(
        async () => {
          if (++calls < 3) throw Object.assign(new Error("deadlock"), { code: "40P01" });
          return "ok";
        },
        { baseDelayMs: 1 },
      ),
    ).toBe("ok");
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw Object.assign(new Error("dup"), { code: "23505" });
        },
        { baseDelayMs: 1 },
      ),
    ).rejects.toThrow("dup");
    expect(calls).toBe(1);
  });

  it("classifies MySQL and MariaDB errors by the server's error number, not their SQLSTATE", async () => {
    // What mysql2 throws: code, errno, sqlState and sqlMessage.
    const mysqlError = (errno: number, code: string, sqlState: string, sqlMessage = code) =>
      Object.assign(new Error(sqlMessage), { errno, code, sqlState, sqlMessage });
    const deadlock = mysqlError(1213, "ER_LOCK_DEADLOCK", "40001");
    expect(classifyDatabaseError(deadlock)).toMatchObject({ kind: "conflict", transient: true });
    // A lock wait that ran out is HY000 like most errors: a claim answers it in flight, nothing retries it.
    expect(classifyDatabaseError(mysqlError(1205, "ER_LOCK_WAIT_TIMEOUT", "HY000"))).toMatchObject({
      kind: "timeout",
      transient: false,
    });
    expect(classifyDatabaseError(mysqlError(1040, "ER_CON_COUNT_ERROR", "08004"))).toMatchObject({
      kind: "resources",
      transient: true,
    });
    expect(classifyDatabaseError(mysqlError(1045, "ER_ACCESS_DENIED_ERROR", "28000"))).toMatchObject({ kind: "config" });
    expect(
      classifyDatabaseError(Object.assign(new Error("lost"), { code: "PROTOCOL_CONNECTION_LOST", fatal: true })),
    ).toMatchObject({
      kind: "connection",
      transient: true,
    });
    // 1062 and NOT NULL (1048) share 23000: only the number tells the duplicate key, named by its index.
    expect(uniqueViolationConstraint(mysqlError(1048, "ER_BAD_NULL_ERROR", "23000"))).toBeNull();
    expect(
      uniqueViolationConstraint(
        mysqlError(1062, "ER_DUP_ENTRY", "23000", "Duplicate entry 'INV-1' for key 'invoices_number_key'"),
      ),
    ).toBe("invoices_number_key");
    // MySQL 8 names the index with its table.
    expect(
      uniqueViolationConstraint(
        mysqlError(1062, "ER_DUP_ENTRY", "23000", "Duplicate entry 'INV-1' for key 'invoices.invoices_number_key'"),
      ),
    ).toBe("invoices_number_key");
    // A conflict gets more attempts than other transient errors (a deadlock's survivors may collide again).
    let calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw deadlock;
        },
        { baseDelayMs: 1 },
      ),
    ).rejects.toBe(deadlock);
    expect(calls).toBe(8);
  });
});

describe("small pieces", () => {
  it("finds the constraint of a unique violation from pg or Prisma", () => {
    expect(uniqueViolationConstraint({ code: "23505", constraint: "users_email_key" })).toBe("users_email_key");
    expect(uniqueViolationConstraint({ code: "P2002", meta: { target: ["email"] } })).toBe("email");
    expect(uniqueViolationConstraint({ code: "23503" })).toBeNull();
  });

  it("buckets gaps like Prometheus (le) with +Inf last", () => {
    expect(gapBucketIndex(0.5)).toBe(0);
    expect(gapBucketIndex(1)).toBe(0);
    expect(gapBucketIndex(2)).toBe(1);
    expect(gapBucketIndex(10 ** 9)).toBe(15);
  });

  it("polls with bounded backoff, never past the deadline, waking at the lease end", () => {
    expect(nextPollDelay(0, 10_000, null)).toBe(10);
    expect(nextPollDelay(10, 10_000, null)).toBe(250);
    expect(nextPollDelay(10, 30, null)).toBe(30);
    expect(nextPollDelay(10, 10_000, 20)).toBe(25);
  });

  it("classifies errors for broker adapters", () => {
    expect(classifyError(new EffectInFlightError("t", "k:1", null, 1500))).toEqual({ kind: "in_flight", retryAfterMs: 1500 });
    expect(classifyError(new EffectKeyReuseError("t", "k:1", null))).toEqual({ kind: "key_reuse" });
    expect(classifyError(new InvalidEffectKeyError("bad"))).toEqual({
      kind: "library",
      code: "INVALID_EFFECT_KEY",
      disposition: "dead-letter",
    });
    expect(classifyError(new Error("handler"))).toEqual({ kind: "handler" });
  });
});
