// Generates the Prisma client (lib/db/generated) from prisma/schema.prisma.
// The Prisma CLI insists on a native schema-engine binary that it would download from its own
// host, which this project may not reach; `generate` never runs it, so any executable will do.
import { spawnSync } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const result = spawnSync(path.join(root, "node_modules", ".bin", "prisma"), ["generate"], {
  cwd: root,
  stdio: ["ignore", "ignore", "inherit"],
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
    CHECKPOINT_DISABLE: "1",
  },
});
if (result.status !== 0) {
  process.stderr.write("onceboard: prisma generate failed (see above)\n");
  process.exit(result.status ?? 1);
}
