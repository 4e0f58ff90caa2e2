/** Whether a process exists (EPERM: it does, owned by another user such as `postgres`). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Calls `onGone` once the process that started this one is gone (a SIGKILLed `npm start`): its
 * children (the console, the demo workers) stop instead of running on unowned, writing to a
 * closed pipe.
 */
export function exitWithParent(parentPid: number | undefined, onGone: () => void): void {
  if (!parentPid) return;
  const timer = setInterval(() => {
    if (!isProcessAlive(parentPid)) {
      clearInterval(timer);
      onGone();
    }
  }, 2000);
  timer.unref();
}
