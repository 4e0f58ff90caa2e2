import type { ClaimRow } from "./claim-sql";
import { isLockTimeout } from "./pg-errors";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** 10 ms, doubling, at most 250 ms; never past the deadline; wakes just after the lease ends. */
export function nextPollDelay(poll: number, remainingMs: number, leaseRemainingMs: number | null): number {
  let delay = Math.min(250, 10 * 2 ** poll);
  if (leaseRemainingMs !== null && leaseRemainingMs >= 0) delay = Math.min(delay, leaseRemainingMs + 5);
  return Math.max(1, Math.min(delay, remainingMs));
}

/**
 * Claims, and while another delivery holds the effect (in_flight) polls with bounded backoff until
 * it settles or `waitMs` runs out. Each poll is one claim round trip, so a waiter also takes over
 * promptly if the owner's lease expires. We chose bounded polling over LISTEN/NOTIFY: NOTIFY
 * takes a global lock at commit, which every completion would pay for the rare waiter.
 *
 * A claim blocked on the advisory lock (a transactional claim is holding it inside its caller's
 * transaction) fails with lock_not_available (55P03; MySQL's 1205) once the remaining wait is spent; that is
 * reported as in_flight too. Returns the last row: in_flight when the wait ran out.
 */
export async function claimWithWait(
  claimOnce: (lockTimeoutMs: number) => Promise<ClaimRow>,
  waitMs: number,
  options: { abortsOnLockTimeout: boolean },
): Promise<ClaimRow> {
  const deadline = Date.now() + waitMs;
  for (let poll = 0; ; poll++) {
    const remaining = Math.max(1, deadline - Date.now());
    let row: ClaimRow;
    try {
      row = await claimOnce(remaining);
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
      // Inside a caller's transaction the error aborted it: we cannot poll again. Outside, the
      // lock wait used up the remaining wait, so the loop ends below either way.
      row = lockTimedOut();
      if (options.abortsOnLockTimeout) return row;
    }
    if (row.result !== "in_flight") return row;
    const left = deadline - Date.now();
    if (left <= 0) return row;
    const leaseLeft = row.leaseUntil ? row.leaseUntil.getTime() - row.dbNow.getTime() : null;
    await sleep(nextPollDelay(poll, left, leaseLeft));
  }
}

function lockTimedOut(): ClaimRow {
  return {
    result: "in_flight",
    status: "in_progress",
    attempt: 0,
    owner: null,
    policy: "transactional",
    createdAt: null,
    leaseUntil: null,
    outcome: null,
    error: null,
    gapSeconds: null,
    duplicateCount: 0,
    firstMessageId: null,
    dbNow: new Date(),
  };
}
