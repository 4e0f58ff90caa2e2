import { describe, expect, it } from "vitest";
import { EffectsDatabaseError, InvalidEffectInputError, OutcomeNotStorableError } from "../idempotency/errors";
import { decide } from "./deliveries";

describe("decide", () => {
  it("never reports a connection cut as the handler's failure", () => {
    for (const error of [
      new Error("Client has encountered a connection error and is not queryable"),
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      new EffectsDatabaseError("effects statement failed", { cause: Object.assign(new Error("x"), { code: "08006" }) }),
    ]) {
      expect(decide(error)).toMatchObject({ action: "fail", fault: "database" });
    }
    expect(decide(new Error("provider 503"))).toMatchObject({ action: "fail", fault: "handler" });
  });

  it("dead-letters bad input and outcomes that cannot be stored", () => {
    expect(decide(new InvalidEffectInputError("jobType must be a non-empty string", { field: "jobType" }))).toMatchObject({
      action: "dead-letter",
      code: "INVALID_INPUT",
    });
    expect(decide(new OutcomeNotStorableError("a:b", "a BigInt", true))).toMatchObject({
      action: "dead-letter",
      code: "OUTCOME_NOT_STORABLE",
    });
  });
});
