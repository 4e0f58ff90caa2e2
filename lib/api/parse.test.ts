import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError } from "./errors";
import { MAX_BODY_BYTES, parseJsonBody, readBodyText } from "./parse";

const schema = z.object({ retentionDays: z.number().int() }).strict();
const put = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request("http://console.test/api/v1/retention/settings", { method: "PUT", body, headers, duplex: "half" } as RequestInit);

async function refusal(promise: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  const error = await promise.then(
    () => {
      throw new Error("expected a refusal");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  const e = error as ApiError;
  return { code: e.code, status: e.status, message: e.message };
}

describe("request bodies", () => {
  it("parses a JSON body with the schema", async () => {
    expect(await parseJsonBody(schema, put('{"retentionDays": 9}'))).toEqual({ retentionDays: 9 });
  });

  it("names what is wrong: no body, not JSON, the schema's issues", async () => {
    expect(await refusal(parseJsonBody(schema, put("")))).toMatchObject({
      status: 400,
      message: "invalid body: a JSON object is required",
    });
    expect(await refusal(parseJsonBody(schema, put("{bad")))).toMatchObject({
      status: 400,
      message: "invalid body: not valid JSON",
    });
    expect((await refusal(parseJsonBody(schema, put('{"retentionDays":"ten"}')))).message).toMatch(
      /^invalid body: retentionDays /,
    );
  });

  it("refuses a body past the limit with 413, by Content-Length or while reading a stream that declares none", async () => {
    const big = `{"x":"${"a".repeat(MAX_BODY_BYTES)}"}`;
    expect(await refusal(parseJsonBody(schema, put(big)))).toMatchObject({ code: "PAYLOAD_TOO_LARGE", status: 413 });
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(4096).fill(97));
      },
    });
    expect(await refusal(readBodyText(put(endless)))).toMatchObject({ status: 413 });
    // It stopped reading at the limit, not at the end of the (endless) stream.
    expect(pulled).toBeLessThan(MAX_BODY_BYTES / 4096 + 4);
  });
});
