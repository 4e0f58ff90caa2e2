import Link from "next/link";
import type { EffectStatesResponse } from "@/lib/features/keys-and-effects/states-contract";
import {
  BROWSE_LABELS,
  type BrowseList,
  KEY_REUSE,
  type StatesFilters,
  statesHref,
} from "@/lib/features/keys-and-effects/states-types";
import { formatCount, formatCountOf } from "@/lib/format";

const TONE: Record<BrowseList, "success" | "warning" | "danger" | undefined> = {
  in_progress: undefined,
  stuck: "warning",
  failed: "danger",
  abandoned: "danger",
  completed: "success",
  key_reuse: "danger",
};

/**
 * The states with their counts for the filter, each a link to its list (Oban Web's sidebar): the
 * effect states, which add up to every effect of the filter, and apart from them the deliveries
 * refused for key reuse, which are not effects.
 */
export function StateCounts({
  counts,
  selected,
  filters,
}: {
  counts: EffectStatesResponse;
  selected: BrowseList;
  filters: StatesFilters;
}) {
  const entry = (list: BrowseList, count: number) => (
    <li key={list}>
      <Link
        href={statesHref({ ...filters, state: list, cursor: null })}
        aria-current={list === selected ? "page" : undefined}
        className="state-link"
        data-testid="state-link"
        data-state={list}
      >
        <span>{BROWSE_LABELS[list]}</span>
        <span className="badge" data-tone={count > 0 ? TONE[list] : undefined} data-testid="state-count">
          {formatCount(count)}
        </span>
      </Link>
    </li>
  );
  return (
    <nav className="panel states-nav" aria-label="States">
      <h2 className="states-nav-heading">Effects</h2>
      <ul className="states-nav-list">{counts.states.map((s) => entry(s.state, s.count))}</ul>
      <p className="muted states-nav-total" data-testid="states-total">
        {formatCountOf(counts.total, "effect")} in all
      </p>
      <h2 className="states-nav-heading">Refused deliveries</h2>
      <ul className="states-nav-list">{entry(KEY_REUSE, counts.keyReuse)}</ul>
      <p className="muted states-nav-total">dead-lettered by the adapters; nothing ran</p>
    </nav>
  );
}
