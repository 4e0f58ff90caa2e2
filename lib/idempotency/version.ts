/**
 * The package this library ships as, and its version: `migrate()` records them on the schema it
 * advances, so an older copy of the library meeting that schema can say which version to install.
 * `npm run version:packages` (changesets) bumps packages/idempotency/package.json and rewrites
 * LIBRARY_VERSION to match (packages/idempotency/sync-version.mjs); `npm run pack:lib` refuses to
 * pack when the two differ. Typed `string` so that a release does not change the API report.
 */
export const LIBRARY_PACKAGE: string = "@onceboard/idempotency";
export const LIBRARY_VERSION: string = "0.2.0";
