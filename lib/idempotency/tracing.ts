import type { Acquired } from "./claim";
import type { StepSpec } from "./spec";
import { LIBRARY_PACKAGE, LIBRARY_VERSION } from "./version";

/**
 * OpenTelemetry spans for claims and steps. `@opentelemetry/api` is an optional peer: it is
 * imported once, lazily, and when it is not installed every function here answers null and the
 * step runs as before. When it is installed but no tracer provider is registered, the API hands
 * out non-recording spans: nothing is exported. Only types are imported statically.
 */
type OtelApi = typeof import("@opentelemetry/api");
type Span = import("@opentelemetry/api").Span;
type Context = import("@opentelemetry/api").Context;
type Attributes = import("@opentelemetry/api").Attributes;
type Link = import("@opentelemetry/api").Link;

let loading: Promise<OtelApi | null> | undefined;

function otel(): Promise<OtelApi | null> {
  loading ??= import("@opentelemetry/api").then(
    (api) => api,
    () => null,
  );
  return loading;
}

/**
 * The API when a tracer provider is registered, else null. Without one, every span would be a
 * non-recording no-op, yet building it (a tracer, attributes, a context) cost a duplicate's hot path
 * measurable time (docs/benchmarks.md, issue 37's quiet-machine comparison). Asked on every call,
 * because a provider may be registered after the first claim. The global provider is the API's proxy,
 * which hands out a delegate's tracer only once a real provider is set.
 */
async function recordingApi(): Promise<OtelApi | null> {
  const api = await otel();
  if (!api) return null;
  const provider = api.trace.getTracerProvider() as { getDelegateTracer?: (name: string, version?: string) => unknown };
  if (
    typeof provider.getDelegateTracer === "function" &&
    provider.getDelegateTracer(LIBRARY_PACKAGE, LIBRARY_VERSION) === undefined
  )
    return null;
  return api;
}

/** The attribute names, one definition each (docs/worker-library.md "Tracing" lists them). */
export const TRACE_ATTRIBUTES = {
  tenant: "onceboard.tenant",
  key: "onceboard.effect.key",
  jobType: "onceboard.job.type",
  policy: "onceboard.step.policy",
  answer: "onceboard.claim.answer",
  attempt: "onceboard.effect.attempt",
  deliveryAttempt: "onceboard.delivery.attempt",
  result: "onceboard.step.result",
  messageId: "messaging.message.id",
} as const;

function specAttributes(spec: StepSpec): Attributes {
  const attributes: Attributes = {
    [TRACE_ATTRIBUTES.tenant]: spec.tenant,
    [TRACE_ATTRIBUTES.key]: spec.key,
    [TRACE_ATTRIBUTES.jobType]: spec.jobType,
    [TRACE_ATTRIBUTES.policy]: spec.policy,
  };
  if (spec.messageId !== null) attributes[TRACE_ATTRIBUTES.messageId] = spec.messageId;
  if (spec.deliveryAttempt !== null) attributes[TRACE_ATTRIBUTES.deliveryAttempt] = spec.deliveryAttempt;
  return attributes;
}

function failed(api: OtelApi, span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** One step's span: its claims are children of it, and the step's own code runs inside it. */
export interface StepTrace {
  /** Runs one claim in a child span carrying the claim's answer and the effect's attempt. */
  claim(run: () => Promise<Acquired>): Promise<Acquired>;
  /** Runs the step's own code with the step span active (its database spans nest under it). */
  within<T>(fn: () => T): T;
  /** Ends the step span with its result, or as failed. */
  end(outcome: { result: string } | { error: unknown }): void;
}

async function claimSpan(
  api: OtelApi,
  spec: StepSpec,
  parent: Context,
  run: () => Promise<Acquired>,
  links?: Link[],
): Promise<Acquired> {
  const tracer = api.trace.getTracer(LIBRARY_PACKAGE, LIBRARY_VERSION);
  const span = tracer.startSpan(`onceboard claim ${spec.jobType}`, { attributes: specAttributes(spec), links }, parent);
  try {
    const acquired = await run();
    span.setAttribute(TRACE_ATTRIBUTES.answer, acquired.row.result);
    span.setAttribute(TRACE_ATTRIBUTES.attempt, acquired.kind === "owned" ? acquired.claim.attempt : acquired.row.attempt);
    return acquired;
  } catch (error) {
    // In flight, key reuse, retention expired: the claim's answer is the typed error's code.
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === "string") span.setAttribute(TRACE_ATTRIBUTES.answer, code.toLowerCase());
    failed(api, span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * The delivery's span, when the adapter passed its context: a link (the delivery may have been
 * published long before, by another process), while the parent stays whatever span is active.
 */
function deliveryLinks(spec: StepSpec): Link[] | undefined {
  const delivered = spec.traceContext;
  if (!delivered) return undefined;
  return [
    { context: { traceId: delivered.traceId, spanId: delivered.spanId, traceFlags: delivered.traceFlags ?? 0, isRemote: true } },
  ];
}

/** Starts a step's span; null when @opentelemetry/api is not installed or no tracer provider is registered. */
export async function traceStep(spec: StepSpec): Promise<StepTrace | null> {
  const api = await recordingApi();
  if (!api) return null;
  const tracer = api.trace.getTracer(LIBRARY_PACKAGE, LIBRARY_VERSION);
  const parent = api.context.active();
  const span = tracer.startSpan(
    `onceboard step ${spec.jobType}`,
    { attributes: specAttributes(spec), links: deliveryLinks(spec) },
    parent,
  );
  const inside = api.trace.setSpan(parent, span);
  return {
    claim: (run) => claimSpan(api, spec, inside, run),
    within: (fn) => api.context.with(inside, fn),
    end(outcome) {
      if ("result" in outcome) span.setAttribute(TRACE_ATTRIBUTES.result, outcome.result);
      else failed(api, span, outcome.error);
      span.end();
    },
  };
}

/** effects.claim(): the claim alone, in its own span linked to the delivery's, without a step around it. */
export async function traceClaim(spec: StepSpec, run: () => Promise<Acquired>): Promise<Acquired> {
  const api = await recordingApi();
  if (!api) return run();
  return claimSpan(api, spec, api.context.active(), run, deliveryLinks(spec));
}
