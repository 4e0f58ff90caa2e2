import type { Message } from "amqplib";
import { describe, expect, it } from "vitest";
import { traceContextOf } from "./deliveries";
import { deliveryOfAmqpMessage } from "./rabbitmq";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";

describe("traceContextOf: a message's W3C traceparent as the span the library's spans link to", () => {
  it("reads version 00, as text or as the Buffer an AMQP header may arrive as", () => {
    const expected = { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 };
    expect(traceContextOf(`00-${TRACE_ID}-${SPAN_ID}-01`)).toEqual(expected);
    expect(traceContextOf(Buffer.from(`00-${TRACE_ID}-${SPAN_ID}-01`))).toEqual(expected);
  });

  it("loses the link, never the delivery, on anything else", () => {
    for (const header of [
      undefined,
      null,
      42,
      "",
      `01-${TRACE_ID}-${SPAN_ID}-01`,
      `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`,
      `00-${"0".repeat(32)}-${SPAN_ID}-01`,
      `00-${TRACE_ID}-${"0".repeat(16)}-01`,
      `00-${TRACE_ID}-${SPAN_ID}`,
    ]) {
      expect(traceContextOf(header), String(header)).toBeNull();
    }
  });

  it("RabbitMQ: a delivery carries its message's traceparent header", () => {
    const message = {
      content: Buffer.from("{}"),
      fields: { redelivered: false },
      properties: { messageId: "m-1", headers: { traceparent: `00-${TRACE_ID}-${SPAN_ID}-00` } },
    } as unknown as Message;
    expect(deliveryOfAmqpMessage("q", message).traceContext).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 0 });
    const untraced = { ...message, properties: { messageId: "m-2", headers: {} } } as unknown as Message;
    expect(deliveryOfAmqpMessage("q", untraced).traceContext).toBeNull();
  });
});
