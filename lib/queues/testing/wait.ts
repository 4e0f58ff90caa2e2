/** Polls `check` until it returns a truthy value; fails with `what` after `timeoutMs` (a bound, not an assertion on time). */
export async function waitFor<T>(what: string, check: () => Promise<T> | T, timeoutMs = 45_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
