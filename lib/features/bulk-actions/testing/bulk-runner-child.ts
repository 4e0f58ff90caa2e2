import { setTimeout as sleep } from "node:timers/promises";
import { getPrisma } from "../../../db/prisma";
import { runOneBulkAction } from "../bulk-runner";

/**
 * A console process running bulk actions, for the crash test (lib/features/bulk-actions/bulk-actions.test.ts):
 * runs one action with a short lease, printing "item <seq>" after each item commits and pausing a
 * little, so the parent can SIGKILL it mid-way. DATABASE_URL comes from the parent.
 */
const leaseMs = Number(process.argv[2] ?? "1500");
runOneBulkAction({
  owner: `child:${process.pid}`,
  leaseMs,
  afterItem: async ({ seq }) => {
    process.stdout.write(`item ${seq}\n`);
    await sleep(25);
  },
})
  .then(async (applied) => {
    process.stdout.write(`done ${applied}\n`);
    await getPrisma().$disconnect();
    process.exit(0);
  })
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
