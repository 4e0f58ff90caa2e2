import { runAdviseCommand } from "../lib/retention/advise-command";

/** Temporary entry point until `npm run retention -- advise` (scripts/retention.ts, issue 11) calls runAdviseCommand. */
runAdviseCommand(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
