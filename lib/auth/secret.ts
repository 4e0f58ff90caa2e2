import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { loadConfig } from "../config";
import { ensurePrivateDataDir } from "../db/data-dir";

declare global {
  var __onceboardSessionSecret: Buffer | undefined;
}

/**
 * The key that signs session cookies: ONCEBOARD_SECRET, or else a random one generated on first use
 * and kept in <ONCEBOARD_DATA_DIR>/session-secret, created exclusively with mode 0600 in a 0700
 * directory (never readable by another user). Two starts racing both try an exclusive create;
 * the loser reads the winner's file. Several console instances must share ONCEBOARD_SECRET.
 */
export function sessionSecret(): Buffer {
  if (globalThis.__onceboardSessionSecret) return globalThis.__onceboardSessionSecret;
  const config = loadConfig();
  const secret = config.ONCEBOARD_SECRET
    ? Buffer.from(config.ONCEBOARD_SECRET, "utf8")
    : readOrCreateSecretFile(path.resolve(config.ONCEBOARD_DATA_DIR, "session-secret"));
  globalThis.__onceboardSessionSecret = secret;
  return secret;
}

function readOrCreateSecretFile(file: string): Buffer {
  ensurePrivateDataDir(path.dirname(file));
  try {
    const fd = fs.openSync(file, "wx", 0o600);
    try {
      fs.writeSync(fd, randomBytes(32).toString("base64url"));
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = fs.statSync(file);
  if ((stat.mode & 0o077) !== 0) {
    // Someone loosened it: tighten it back rather than sign sessions with a key others can read.
    fs.chmodSync(file, 0o600);
  }
  for (let i = 0; i < 50; i++) {
    const value = fs.readFileSync(file, "utf8").trim();
    if (value.length >= 32) return Buffer.from(value, "utf8");
    // A concurrent creator has opened the file but not written it yet.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
  throw new Error(`${file} holds no usable session secret: delete it or set ONCEBOARD_SECRET`);
}
