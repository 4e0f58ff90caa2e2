import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test/database";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "retention.ts"), ...args], {
      env: { ...process.env, DATABASE_URL: db.url },
    });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    proc.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    proc.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("npm run retention -- settings set", () => {
  it("refuses --retention-days below the retry window naming the flag to change first and its value, and changes nothing", async () => {
    await db.pool.query(
      `INSERT INTO retention_settings (id, retention_days, max_retry_window_days) VALUES (1, 7, 3)
       ON CONFLICT (id) DO UPDATE SET retention_days = 7, max_retry_window_days = 3`,
    );
    const refused = await cli("settings", "set", "--retention-days", "2");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^onceboard: RETENTION_INVALID: retention \(2d\) must be at least the fleet's max retry window \(3d\)/m,
    );
    expect(refused.stderr).toContain(
      "onceboard:   --max-retry-window-days: lower it first to 2 or less (now 3), once no worker retries for longer",
    );
    const { rows } = await db.pool.query<{ retention_days: number }>(
      "SELECT retention_days FROM retention_settings WHERE id = 1",
    );
    expect(rows[0]?.retention_days).toBe(7);
    // Lowering the window first, as it says, lets the same change through.
    expect((await cli("settings", "set", "--max-retry-window-days", "2", "--retention-days", "2")).code).toBe(0);
  });
});
