import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { assertClusterVersion, embeddedMajorVersion } from "./embedded-version";

const dirs: string[] = [];
async function clusterDir(version: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-pgversion-"));
  dirs.push(dir);
  await fs.writeFile(path.join(dir, "PG_VERSION"), `${version}\n`);
  return dir;
}
afterAll(() => Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true }))));

describe("embedded PostgreSQL version", () => {
  it("is PostgreSQL 18 by default", () => {
    expect(embeddedMajorVersion()).toBe(18);
  });

  it("accepts a cluster made by the same major version", async () => {
    await expect(assertClusterVersion(await clusterDir(String(embeddedMajorVersion())))).resolves.toBeUndefined();
  });

  it("refuses a cluster made by another major version, saying which", async () => {
    const dir = await clusterDir("17");
    await expect(assertClusterVersion(dir)).rejects.toThrow(
      /created by PostgreSQL 17, but the installed binaries are PostgreSQL 18/,
    );
  });
});
