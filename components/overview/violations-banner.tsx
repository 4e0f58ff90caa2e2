"use client";

import Link from "next/link";
import type { ViolationGroup } from "@/lib/features/violations/contract";
import { violationsHref } from "@/lib/features/violations/violations-types";
import { formatCount, formatCountOf, formatUtc } from "@/lib/format";

export function ViolationsBanner({
  total,
  groups,
  range,
}: {
  total: number;
  groups: ViolationGroup[];
  range: { from: string; to: string };
}) {
  if (total === 0 && groups.length === 0) return null;
  const count = Math.max(
    total,
    groups.reduce((a, g) => a + g.count, 0),
  );
  return (
    <div className="banner" data-tone="danger" role="alert" data-testid="violations-banner">
      <div>
        <strong>{`${formatCountOf(count, "uncaught unique violation")} in this range.`}</strong> A handler hit a unique constraint
        with its own writes: a duplicate got past its guard.{" "}
        <Link href={violationsHref({ from: range.from, to: range.to })} data-testid="violations-link">
          Every affected key
        </Link>
        {groups.length > 0 ? (
          <ul className="violation-keys">
            {groups.slice(0, 8).map((g) => (
              <li key={`${g.tenant}|${g.jobType}|${g.constraint}`}>
                <Link
                  href={violationsHref({
                    tenant: g.tenant,
                    jobType: g.jobType,
                    constraint: g.constraint,
                    from: range.from,
                    to: range.to,
                  })}
                  data-testid="violation-group"
                >
                  {`${formatCount(g.count)}× ${g.constraint}`}
                </Link>{" "}
                <span className="muted">
                  tenant {g.tenant} · {g.jobType} · {formatCountOf(g.keys, "key")} · last{" "}
                  {formatUtc(g.lastSeen, { seconds: false })}
                </span>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    </div>
  );
}
