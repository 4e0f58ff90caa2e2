import Link from "next/link";
import type { Gaps } from "@/lib/features/retention-and-gaps/gaps-contract";
import { GAP_RANGE_LABELS, GAP_RANGES } from "@/lib/features/retention-and-gaps/gaps-types";
import { formatUtc } from "@/lib/format";

export interface GapsParams {
  range?: string;
  from?: string;
  to?: string;
  jobType?: string;
  tenant?: string;
}

export function gapsHref(params: GapsParams, change: GapsParams): string {
  const next = { ...params, ...change };
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(next)) if (v) search.set(k, v);
  const s = search.toString();
  return s ? `/gaps?${s}` : "/gaps";
}

/** Time range, job type and tenant, all in the URL (a plain GET form: works without JavaScript too). */
export function GapFilters({ params, jobTypes }: { params: GapsParams; jobTypes: string[] }) {
  const custom = Boolean(params.from);
  return (
    <div className="toolbar gap-filters">
      <nav className="segmented" aria-label="Time range">
        {GAP_RANGES.map((r) => (
          <Link
            key={r}
            href={gapsHref(params, { range: r, from: undefined, to: undefined })}
            replace
            scroll={false}
            aria-current={!custom && (params.range ?? "30d") === r ? "true" : undefined}
            aria-label={`${r}: ${GAP_RANGE_LABELS[r]}`}
            className="segment"
          >
            {r}
          </Link>
        ))}
      </nav>
      <form method="get" action="/gaps" className="filter-form">
        {custom ? (
          <>
            <input type="hidden" name="from" value={params.from} />
            <input type="hidden" name="to" value={params.to} />
          </>
        ) : params.range ? (
          <input type="hidden" name="range" value={params.range} />
        ) : null}
        <label>
          Job type{" "}
          <select name="jobType" defaultValue={params.jobType ?? ""}>
            <option value="">all</option>
            {[...new Set([...(params.jobType ? [params.jobType] : []), ...jobTypes])].map((j) => (
              <option key={j} value={j}>
                {j}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tenant <input name="tenant" defaultValue={params.tenant ?? ""} placeholder="all" size={12} />
        </label>
        <button type="submit" className="button button-quiet">
          Apply
        </button>
      </form>
    </div>
  );
}

export function describeRange(gaps: Gaps): string {
  const at = (iso: string) => formatUtc(iso, { seconds: false });
  return `${gaps.range === "custom" ? "Custom range" : GAP_RANGE_LABELS[gaps.range]}: ${at(gaps.from)} – ${at(gaps.to)}`;
}
