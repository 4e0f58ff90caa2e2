/**
 * The response header proxy.ts sets on a page whose URL is invalid (lib/routes/page-queries.ts): the
 * status the console's server (scripts/console-server.ts) answers with instead of the page's 200,
 * and removes before the head is written. Its own module: the server reads it before Next loads.
 */
export const PAGE_STATUS_HEADER = "x-onceboard-page-status";
