/*
 * Next.js configuration (ESM: package.json has "type": "module").
 * - pg and the Prisma runtime stay external to the server bundle and load with Node's own
 *   resolution (pg and @prisma/client are on Next's built-in list; the adapter is not).
 * - No telemetry: the scripts set NEXT_TELEMETRY_DISABLED=1 for every next child process, and this
 *   file sets it too, so a bare `next build` / `npm run build` sends nothing either (Next loads
 *   this file before it starts its telemetry).
 * - `next build` does not type-check (`ignoreBuildErrors`): `npm run typecheck` (part of `npm test`)
 *   checks every file. Next reads tsconfig.next.json (the code the app is built from, not tests or
 *   scripts) and may edit that file, never tsconfig.json.
 * - No remote assets: system fonts only, no next/font/google, no remote images.
 * - `output: "standalone"` when building: the build also writes .next/standalone, the server with
 *   only the files it traced, which `npm run pack:console` ships as @onceboard/console. The rest of
 *   .next is what it was, so `npm start` (scripts/console-server.ts) serves the same build as
 *   before; its server loads this file without the setting, which would only make Next warn that
 *   `next start` is not the standalone server.
 */
import { PHASE_PRODUCTION_BUILD } from "next/constants.js";

process.env.NEXT_TELEMETRY_DISABLED ??= "1";

/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "@prisma/client"],
  images: { unoptimized: true },
  // `npm run typecheck` (part of `npm test`) checks every file; skipping it here takes ~15 s off
  // the first `npm start` on a fresh clone.
  typescript: { tsconfigPath: "tsconfig.next.json", ignoreBuildErrors: true },
};

/** @param {string} phase */
export default function config(phase) {
  return phase === PHASE_PRODUCTION_BUILD ? { ...nextConfig, output: "standalone" } : nextConfig;
}
