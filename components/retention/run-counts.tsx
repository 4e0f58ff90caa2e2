import Link from "next/link";

/** The run counts offered beside the runs table (?runs=), besides the default. */
const RUN_COUNTS = [20, 50, 200];

/** "last 20 · 50 · 200": links to show that many maintenance runs, `shown` (null: none, the URL's is invalid) marked. */
export function RunCounts({ shown, defaultShown }: { shown: number | null; defaultShown: number }) {
  const counts = [...new Set([defaultShown, ...RUN_COUNTS, ...(shown === null ? [] : [shown])])].sort((a, b) => a - b);
  return (
    <span className="panel-meta" data-testid="run-counts">
      last{" "}
      {counts.map((n, i) => (
        <span key={n}>
          {i > 0 ? " · " : null}
          {n === shown ? (
            <strong aria-current="true">{n}</strong>
          ) : (
            <Link href={n === defaultShown ? "/retention" : `/retention?runs=${n}`}>{n}</Link>
          )}
        </span>
      ))}
    </span>
  );
}
