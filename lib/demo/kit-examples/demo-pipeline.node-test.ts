/**
 * The kit under node:test, no Vitest or Jest involved:
 *   KIT_DATABASE_URL=postgresql://… node --import tsx --test lib/demo/kit-examples/demo-pipeline.node-test.ts
 * (or without --test: node runs the file's tests directly).
 * The database must carry Onceboard's migrations (the effects table and the demo tables).
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { assertIdempotent, IdempotencyCheckError } from "../../idempotency/testing";
import { checkThenAct, closeKitProviders, demoPipeline, orderCheck, orderMessage } from "./order-handlers";

const url = process.env.KIT_DATABASE_URL ?? process.env.DATABASE_URL;
if (!url) throw new Error("set KIT_DATABASE_URL (or DATABASE_URL) to a migrated Onceboard database");
// The demo's providers the handlers call are served from this process: stop them at the end.
after(closeKitProviders);

test("the demo pipeline is idempotent", async () => {
  await assertIdempotent(orderCheck(url, orderMessage("node-test-demo"), demoPipeline));
});

test("a check-then-act handler is not: two deliveries at once both charge", async () => {
  const check = { ...orderCheck(url, orderMessage("node-test-naive"), checkThenAct), scenarios: ["concurrent" as const] };
  await assert.rejects(assertIdempotent(check), (error: unknown) => {
    assert.ok(error instanceof IdempotencyCheckError);
    assert.match(error.message, /✗ concurrent/);
    assert.match(error.message, /captures: 1 item → \d items/);
    return true;
  });
});
