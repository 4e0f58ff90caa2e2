import type { Claim, OwnedClaim } from "./claim";
import { type BatchClaimInput, claimMany, storeMany } from "./claim-batch";
import type { EffectsCore } from "./core";
import { EffectsError, InvalidEffectInputError } from "./errors";
import { once } from "./once";
import type { EncodedOutcome } from "./outcome";
import { checkFunction } from "./spec";
import { answerExisting, type EffectResult, type OutcomeSink, runOwned, stepLog } from "./step";

/** One input's answer from effects.onceMany: what effects.once would have resolved to, or thrown. */
export type OnceManyAnswer<T> = { ok: true; result: EffectResult<T> } | { ok: false; error: unknown };

/**
 * effects.onceMany: effects.once for a batch of effects, in two statements instead of two per key.
 * Every key is claimed together (claimMany: one round trip, one commit), each owned key's `fn` runs
 * concurrently, and the outcomes are stored together once every `fn` has returned or thrown
 * (storeMany: one round trip, one commit). Each input is answered on its own, in input order, with
 * what once would have resolved to or thrown, and records what once records (metrics, rollups,
 * the log line), with two differences a batch needs: a key in flight elsewhere is not waited for
 * (answered EffectInFlightError at once, for the caller to retry later), and a key that appears
 * again in the batch waits for its first copy to be answered and is then run through once (a duplicate,
 * or owned again if the first copy failed). Never rejects for one key's sake.
 */
export async function onceMany<T>(
  core: EffectsCore,
  inputs: readonly BatchClaimInput[],
  fn: (claim: Claim, index: number) => T | Promise<T>,
): Promise<OnceManyAnswer<Awaited<T>>[]> {
  if (!Array.isArray(inputs)) throw new InvalidEffectInputError("onceMany takes an array of once inputs", { field: "inputs" });
  checkFunction(fn, "fn");
  const answers: OnceManyAnswer<Awaited<T>>[] = new Array(inputs.length);
  const batched: number[] = []; // the input index of each key claimed in the batch
  const firstOfKey = new Map<string, number>();
  const later: { index: number; after: number }[] = [];
  for (const [index, input] of inputs.entries()) {
    const id = identityOf(input);
    const first = id === null ? undefined : firstOfKey.get(id);
    if (first !== undefined) {
      later.push({ index, after: first });
      continue;
    }
    if (id !== null) firstOfKey.set(id, index);
    batched.push(index);
  }

  const started = performance.now();
  const claimed = await claimMany(
    core,
    batched.map((index) => inputs[index] as BatchClaimInput),
  );
  const sink = storeTogether(core, claimed.filter((a) => a.ok && a.acquired.kind === "owned").length);
  const answered = new Map<number, Promise<void>>();
  for (const [k, index] of batched.entries()) {
    const answer = claimed[k];
    const answerOf = async (): Promise<OnceManyAnswer<Awaited<T>>> => {
      if (!answer) return { ok: false, error: new Error(`claimMany gave no answer for input ${index}`) };
      if (!answer.ok) {
        if (answer.spec && answer.error instanceof EffectsError) {
          stepLog(core, answer.spec, started)(answer.error.code.toLowerCase(), { err: answer.error.message }, "warn");
        }
        return { ok: false, error: answer.error };
      }
      const { acquired, spec } = answer;
      const logResult = stepLog(core, spec, started);
      if (acquired.kind !== "owned") {
        try {
          return { ok: true, result: answerExisting<Awaited<T>>(core, spec, acquired, logResult) };
        } catch (error) {
          return { ok: false, error };
        }
      }
      try {
        const owned = await runOwned<Awaited<T>>(core, spec, acquired, () => fn(acquired.claim, index), logResult, sink);
        return "error" in owned ? { ok: false, error: owned.error } : { ok: true, result: owned.result };
      } catch (error) {
        return { ok: false, error };
      }
    };
    answered.set(
      index,
      answerOf().then((a) => {
        answers[index] = a;
      }),
    );
  }
  for (const { index, after } of later) {
    const input = inputs[index] as BatchClaimInput;
    const next = (answered.get(after) ?? Promise.resolve()).then(async () => {
      try {
        answers[index] = { ok: true, result: await once(core, input, (claim) => fn(claim, index)) };
      } catch (error) {
        answers[index] = { ok: false, error };
      }
    });
    answered.set(after, next); // the next copy of this key waits for this one
    answered.set(index, next);
  }
  await Promise.all(answered.values());
  return answers;
}

/** The (tenant, key) an input claims, to find a key twice in one batch; null for an input claimMany will refuse. */
function identityOf(input: unknown): string | null {
  if (input === null || typeof input !== "object") return null;
  const { tenant, key } = input as { tenant?: unknown; key?: unknown };
  return typeof tenant === "string" && typeof key === "string" ? JSON.stringify([tenant, key]) : null;
}

/**
 * Stores the outcomes of a batch's owned claims together: one storeMany once every owned claim's
 * step has returned or failed. Each claim still gets its own answer (stored, LeaseLostError, a
 * marker's typed error).
 */
function storeTogether(core: EffectsCore, owned: number): OutcomeSink {
  const waiting: {
    claim: OwnedClaim;
    encoded: EncodedOutcome;
    resolve: (markerError: EffectsError | null) => void;
    reject: (error: unknown) => void;
  }[] = [];
  let left = owned;
  const flushWhenAllRan = () => {
    if (left > 0 || waiting.length === 0) return;
    const batch = waiting.splice(0);
    storeMany(core, batch).then(
      (answers) => {
        for (const [k, w] of batch.entries()) {
          const answer = answers[k];
          if (answer?.ok) w.resolve(answer.markerError);
          else w.reject(answer ? answer.error : new Error(`storeMany gave no answer for key ${w.claim.key}`));
        }
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
  };
  return {
    store: (claim, encoded) =>
      new Promise<EffectsError | null>((resolve, reject) => {
        waiting.push({ claim, encoded, resolve, reject });
        left--;
        flushWhenAllRan();
      }),
    skip: () => {
      left--;
      flushWhenAllRan();
    },
  };
}
