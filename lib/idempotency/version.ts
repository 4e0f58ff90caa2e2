/**
 * The package this library ships as, and its version: `migrate()` records them on the schema it
 * advances, so an older copy of the library meeting that schema can say which version to install.
 * `npm run version:packages` (changesets) rewrites LIBRARY_VERSION together with
 * packages/idempotency/package.json; packages/idempotency/version.test.ts keeps the two equal.
 */
export const LIBRARY_PACKAGE = "@onceboard/idempotency";
export const LIBRARY_VERSION = "0.1.0";
