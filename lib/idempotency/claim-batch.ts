import { randomUUID } from "node:crypto";
import { type Acquired, acquire, type Claim, claimParamsOf, type OwnedClaim, resolveClaimRow } from "./claim";
import { batchOf, type ClaimRow } from "./claim-sql";
import type { EffectsCore } from "./core";
import { sqlFor } from "./db";
import { mapDbError } from "./db-errors";
import { countDelivery } from "./delivery";
import { EffectsError, InvalidEffectInputError } from "./errors";
import type { OnceInput } from "./once";
import { type EncodedOutcome, encodeOutcome } from "./outcome";
import { isLockTimeout } from "./pg-errors";
import { withRetry } from "./retryable";
import { buildStepSpec, checkDelivery, checkObject, type StepSpec } from "./spec";
import { beforeClaim } from "./step";

export type BatchClaimInput = Omit<OnceInput, "policy" | "tx"> & { policy?: "external" | "atMostOnce" };

/** One key's answer in a batch: what effects.claim() would have returned, or what it would have thrown. */
export type BatchAnswer =
  | { ok: true; acquired: Acquired; spec: StepSpec }
  | {
      ok: false;
      error: unknown;
      /** The key's validated spec; absent when the input itself was refused. */
      spec?: StepSpec;
    };

/**
 * effects.claimMany: claims every input in one round trip and one commit (onceboard_claim_batch),
 * then settles each key on its own — a key reused with other data, an in-flight key or an invalid
 * input is that key's answer (an error), never the others'. In-flight keys are not waited for (an
 * adapter delivers them again later). Keys of one batch share job type and policy; mixed ones are
 * split into one batch per (job type, policy). Transactional steps claim inside the caller's
 * transaction and are not batched. If the batch as a whole fails (a lock wait past the timeout),
 * its keys are claimed one by one.
 */
export async function claimMany(core: EffectsCore, inputs: readonly BatchClaimInput[]): Promise<BatchAnswer[]> {
  const answers: BatchAnswer[] = new Array(inputs.length);
  const groups = new Map<string, { index: number; spec: StepSpec }[]>();
  for (const [index, input] of inputs.entries()) {
    try {
      checkObject(input, "input");
      if ((input as { tx?: unknown }).tx !== undefined || (input as { policy?: unknown }).policy === "transactional") {
        throw new InvalidEffectInputError("transactional claims join the caller's transaction and cannot be batched", {
          field: "policy",
        });
      }
      const delivery = checkDelivery(input);
      const spec = buildStepSpec(core, delivery, input);
      await beforeClaim(core, spec);
      countDelivery(core, delivery.jobType, delivery.redelivered);
      const group = `${spec.jobType}\u0001${spec.policy}`;
      const list = groups.get(group) ?? [];
      list.push({ index, spec });
      groups.set(group, list);
    } catch (error) {
      answers[index] = { ok: false, error };
    }
  }

  const sql = sqlFor(core.opts.db, false, core.opts.schema);
  for (const members of groups.values()) {
    if (members.length === 0) continue;
    const started = performance.now();
    let rows: ClaimRow[] | null = null;
    try {
      const claims = members.map(({ spec }) => claimParamsOf(core, spec, `${core.opts.workerId}:${randomUUID()}`, spec.waitMs));
      rows = await withRetry(() => core.store.claimBatch(sql, batchOf(claims)));
    } catch (error) {
      // A lock wait that ran out on one key (PostgreSQL 55P03, MySQL 1205) aborts the whole batch's
      // transaction: claim them singly, each with its own bounded wait. Anything else is every key's error.
      if (!isLockTimeout(error)) {
        const mapped = mapDbError(error);
        for (const m of members) answers[m.index] = { ok: false, error: mapped, spec: m.spec };
        continue;
      }
    }
    const seconds = (performance.now() - started) / 1000 / members.length;
    // One timeline entry for the statement's deliveries, not one per key (before any key's answer
    // can throw: every delivery is recorded, as a single claim records it before settling).
    if (rows && core.timeline) {
      core.timeline.recordBatch(
        members.map((m) => m.spec),
        rows,
        seconds,
      );
    }
    for (const [k, m] of members.entries()) {
      const row = rows?.[k];
      try {
        answers[m.index] = {
          ok: true,
          acquired: row
            ? resolveClaimRow(core, sql, m.spec, row, seconds, { recorded: core.timeline !== null })
            : await acquire(core, sql, m.spec),
          spec: m.spec,
        };
      } catch (error) {
        answers[m.index] = { ok: false, error, spec: m.spec };
      }
    }
  }
  return answers;
}

/** One claim's answer from completeMany: stored, or what claim.complete() would have thrown. */
export type BatchCompleteAnswer = { ok: true } | { ok: false; error: unknown };

/**
 * effects.completeMany: stores the outcomes of many owned claims (from claimMany) in one round trip
 * and one commit, each claim answered as claim.complete() would answer it: an outcome that cannot be
 * kept is stored with its marker and answered with its typed error; a claim taken over meanwhile is
 * answered LeaseLostError; a claim already settled ClaimSettledError. If the statement itself fails,
 * every claim of the batch gets that error (none was stored: it is one statement).
 */
export async function completeMany(
  core: EffectsCore,
  items: readonly { claim: Claim; outcome: unknown }[],
): Promise<BatchCompleteAnswer[]> {
  const encoded = items.map(({ claim, outcome }) => ({
    claim: claim as OwnedClaim,
    encoded: encodeOutcome(outcome, core.opts.maxOutcomeBytes),
  }));
  return (await storeMany(core, encoded)).map((a) =>
    a.ok ? (a.markerError ? { ok: false, error: a.markerError } : { ok: true }) : a,
  );
}

/**
 * One claim's answer from storeMany: stored (with the typed error of an outcome stored as its
 * marker), or not stored, with why.
 */
export type BatchStoreAnswer = { ok: true; markerError: EffectsError | null } | { ok: false; error: unknown };

/** Stores many claims' encoded outcomes in one statement: OwnedClaim.storeEncoded for a batch. */
export async function storeMany(
  core: EffectsCore,
  items: readonly { claim: OwnedClaim; encoded: EncodedOutcome }[],
): Promise<BatchStoreAnswer[]> {
  const answers: BatchStoreAnswer[] = new Array(items.length);
  const open: { index: number; claim: OwnedClaim; encoded: EncodedOutcome }[] = [];
  for (const [index, { claim, encoded }] of items.entries()) {
    try {
      claim.assertOpen();
      open.push({ index, claim, encoded });
    } catch (error) {
      answers[index] = { ok: false, error };
    }
  }
  if (open.length === 0) return answers;
  const sql = sqlFor(core.opts.db, false, core.opts.schema);
  let stored: boolean[];
  try {
    stored = await withRetry(() =>
      core.store.completeBatch(
        sql,
        open.map(({ claim, encoded }) => ({
          ref: claim.ref,
          outcomeJson: encoded.ok ? encoded.json : "null",
          error: encoded.ok ? null : encoded.marker,
        })),
      ),
    );
  } catch (error) {
    const mapped = error instanceof EffectsError ? error : mapDbError(error);
    for (const { index } of open) answers[index] = { ok: false, error: mapped };
    return answers;
  }
  for (const [k, { index, claim, encoded }] of open.entries()) {
    if (!stored[k]) {
      answers[index] = { ok: false, error: claim.leaseLost() };
      continue;
    }
    claim.markCompleted();
    answers[index] = { ok: true, markerError: encoded.ok ? null : claim.markerError(encoded) };
  }
  return answers;
}
