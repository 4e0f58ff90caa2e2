import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { EffectInFlightError } from "../errors";
import { TRACE_ATTRIBUTES as A } from "../tracing";
import { eachCoalescing, PROVIDER_DDL, silentLogger, testEffects } from "./helpers";

let db: TestDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 7)}`;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const DELIVERY_SPAN = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 };

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 6 });
  await db.pool.query(PROVIDER_DDL);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
  await db?.drop();
});

const spansOf = (key: string) => exporter.getFinishedSpans().filter((span) => span.attributes[A.key] === key);

// First, before any provider is registered: the API is installed but hands out no-op spans.
describe("without a registered tracer provider", () => {
  it("emits nothing and the step runs as before", async () => {
    const effects = testEffects(db.pool);
    const key = uniq("capture:order");
    const first = await effects.once({ tenant: "acme", key, jobType: "order.paid", traceContext: DELIVERY_SPAN }, () => 1);
    const again = await effects.once({ tenant: "acme", key, jobType: "order.paid" }, () => 2);
    expect([first.result, again.result, again.outcome]).toEqual(["ran", "duplicate", 1]);
    expect(exporter.getFinishedSpans()).toEqual([]);
    await effects.close();
  });
});

describe("without @opentelemetry/api installed", () => {
  it("emits nothing and the step runs as before", async () => {
    vi.resetModules();
    vi.doMock("@opentelemetry/api", () => {
      throw new Error("Cannot find package '@opentelemetry/api'");
    });
    try {
      const fresh = await import("../index");
      trace.setGlobalTracerProvider(provider); // registered, yet unreachable: the library cannot load the API
      const effects = fresh.createEffects({
        db: db.pool,
        register: false,
        rollups: false,
        flushInterval: 0,
        logger: silentLogger(),
      });
      const key = uniq("capture:order");
      expect((await effects.once({ tenant: "acme", key, jobType: "order.paid" }, () => 1)).result).toBe("ran");
      expect(exporter.getFinishedSpans()).toEqual([]);
      await effects.close();
    } finally {
      trace.disable();
      vi.doUnmock("@opentelemetry/api");
      vi.resetModules();
    }
  });
});

describe("with a registered tracer provider", () => {
  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
  });

  eachCoalescing(() => {
    it("makes each step and claim a span with tenant, key, job type, answer and attempt, linked to the delivery's span", async () => {
      const effects = testEffects(db.pool);
      const id = uniq("order");
      const key = `mark-paid:${id}`;
      const deliver = () =>
        effects.job(
          { tenant: "acme", jobType: "order.paid", messageId: uniq("m"), attempt: 1, traceContext: DELIVERY_SPAN },
          (job) => job.transaction(key, async (tx) => (await tx.query("SELECT 1 AS one")).rows[0]),
        );
      await deliver();
      await deliver();
      const spans = spansOf(key);
      const steps = spans.filter((s) => s.name === "onceboard step order.paid");
      const claims = spans.filter((s) => s.name === "onceboard claim order.paid");
      expect(steps.map((s) => s.attributes[A.result])).toEqual(["ran", "duplicate"]);
      expect(claims.map((s) => [s.attributes[A.answer], s.attributes[A.attempt]])).toEqual([
        ["claimed", 1],
        ["duplicate", 1],
      ]);
      for (const span of spans) {
        expect(span.attributes).toMatchObject({
          [A.tenant]: "acme",
          [A.key]: key,
          [A.jobType]: "order.paid",
          [A.policy]: "transactional",
          [A.deliveryAttempt]: 1,
        });
      }
      // Each claim is a child of its step; each step links to the delivery's span.
      for (const [i, claim] of claims.entries()) {
        expect(claim.parentSpanContext?.spanId).toBe(steps[i]?.spanContext().spanId);
        expect(claim.spanContext().traceId).toBe(steps[i]?.spanContext().traceId);
      }
      for (const step of steps) {
        expect(step.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
          [DELIVERY_SPAN.traceId, DELIVERY_SPAN.spanId],
        ]);
      }
      await effects.close();
    });

    it("marks a step that threw, and a claim answered in flight, as errors", async () => {
      const effects = testEffects(db.pool);
      const key = uniq("capture:order");
      await expect(
        effects.once({ tenant: "acme", key, jobType: "order.paid" }, () => {
          throw new Error("provider said 500");
        }),
      ).rejects.toThrow("provider said 500");
      const client = await db.pool.connect();
      try {
        await client.query("BEGIN");
        const busy = uniq("capture:order");
        await effects.once({ tenant: "acme", key: busy, jobType: "order.paid", policy: "transactional", tx: client }, () => 1);
        await expect(effects.once({ tenant: "acme", key: busy, jobType: "order.paid", wait: 0 }, () => 2)).rejects.toBeInstanceOf(
          EffectInFlightError,
        );
        const inFlight = spansOf(busy).find((s) => s.name.startsWith("onceboard claim") && s.status.code === 2);
        expect(inFlight?.attributes[A.answer]).toBe("effect_in_flight");
      } finally {
        await client.query("ROLLBACK");
        client.release();
      }
      const [claim, step] = spansOf(key);
      expect(claim?.attributes[A.answer]).toBe("claimed");
      expect(step?.status).toEqual({ code: 2, message: "provider said 500" });
      expect(step?.events.map((e) => e.name)).toEqual(["exception"]);
      await effects.close();
    });

    it("effects.claim() is a claim span linked to the delivery's span", async () => {
      const effects = testEffects(db.pool);
      const key = uniq("capture:order");
      const outcome = await effects.claim({ tenant: "acme", key, jobType: "order.paid", traceContext: DELIVERY_SPAN });
      expect(outcome.kind).toBe("owned");
      const [claim] = spansOf(key);
      expect(claim?.name).toBe("onceboard claim order.paid");
      expect(claim?.attributes[A.answer]).toBe("claimed");
      expect(claim?.links[0]?.context.spanId).toBe(DELIVERY_SPAN.spanId);
      await effects.close();
    });
  });

  it("refuses a malformed traceContext, naming the field", async () => {
    const effects = testEffects(db.pool);
    await expect(
      effects.once(
        { tenant: "acme", key: uniq("k:x"), jobType: "j", traceContext: { traceId: "not-hex", spanId: "00f067aa0ba902b7" } },
        () => 1,
      ),
    ).rejects.toMatchObject({ code: "INVALID_INPUT", field: "traceContext" });
    await effects.close();
  });
});
