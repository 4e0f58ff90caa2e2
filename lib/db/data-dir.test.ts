import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensurePrivateDataDir } from "./data-dir";

describe("ensurePrivateDataDir", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-data-dir-"));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  const modeOf = (dir: string) => fs.statSync(dir).mode & 0o777;

  it("makes the data directory 0700, whatever the umask allows", () => {
    const dir = path.join(root, "fresh", ".onceboard");
    ensurePrivateDataDir(dir);
    expect(modeOf(dir)).toBe(0o700);
  });

  it("brings an existing 0755 one back to 0700, its contents untouched", () => {
    const dir = path.join(root, "old");
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    fs.writeFileSync(path.join(dir, "kept"), "x");
    ensurePrivateDataDir(dir);
    expect(modeOf(dir)).toBe(0o700);
    expect(fs.readFileSync(path.join(dir, "kept"), "utf8")).toBe("x");
  });
});
