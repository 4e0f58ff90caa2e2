"use client";

import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { type FormEvent, useState } from "react";
import { OVERVIEW_RANGES, type OverviewRange, RANGE_LABELS } from "@/lib/features/overview/overview-types";

/** `?…` with `changes` applied (null deletes), keeping every other parameter. */
export function withParams(current: URLSearchParams, changes: Record<string, string | null>): string {
  const next = new URLSearchParams(current.toString());
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === "") next.delete(k);
    else next.set(k, v);
  }
  const s = next.toString();
  return s ? `?${s}` : "?";
}

const LOCAL_INPUT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;

/**
 * A datetime-local input holds "YYYY-MM-DDTHH:MM" and blanks anything else; a URL's from/to of
 * another shape (mistyped, so the page shows its error) is shown whole, as text, as it was typed.
 */
function dateInput(iso: string): { type: "datetime-local" | "text"; defaultValue: string } {
  const local = iso.slice(0, 16);
  return iso === "" || LOCAL_INPUT.test(local)
    ? { type: "datetime-local", defaultValue: local }
    : { type: "text", defaultValue: iso };
}

/**
 * Range (presets as links, or a custom from/to in UTC), job type and tenant: all in the URL, so a
 * copied link restores the view. The server validates them; an invalid one is shown as typed, with
 * the error beside the form (app/overview/page.tsx).
 */
export function OverviewFilters({
  range,
  from,
  to,
  jobType,
  tenant,
  jobTypes,
  tenants,
}: {
  range: OverviewRange | null;
  from: string;
  to: string;
  jobType: string | null;
  tenant: string | null;
  jobTypes: string[];
  tenants: string[];
}) {
  const searchParams = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const [custom, setCustom] = useState(range === null);

  const go = (changes: Record<string, string | null>) =>
    router.replace(`${pathname}${withParams(searchParams, changes)}`, { scroll: false });

  const submitFilters = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    go({ jobType: String(form.get("jobType") ?? "").trim() || null, tenant: String(form.get("tenant") ?? "").trim() || null });
  };
  const submitCustom = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const f = String(form.get("from") ?? "");
    const t = String(form.get("to") ?? "");
    go({ window: null, from: f ? `${f}:00Z` : null, to: t ? `${t}:00Z` : null });
  };

  return (
    <div className="overview-filters">
      <nav className="segmented" aria-label="Time range">
        {OVERVIEW_RANGES.map((r) => (
          <Link
            key={r}
            href={`${pathname}${withParams(searchParams, { window: r, from: null, to: null })}`}
            replace
            scroll={false}
            aria-current={r === range ? "true" : undefined}
            aria-label={`${r}: ${RANGE_LABELS[r]}`}
            className="segment"
          >
            {r}
          </Link>
        ))}
        <button
          type="button"
          className="segment"
          aria-pressed={custom}
          aria-current={range === null ? "true" : undefined}
          onClick={() => setCustom((c) => !c)}
        >
          Custom
        </button>
      </nav>
      {custom ? (
        <form className="filter-form" onSubmit={submitCustom} aria-label="Custom range (UTC)">
          <label>
            From (UTC)
            <input name="from" {...dateInput(from)} required />
          </label>
          <label>
            To (UTC)
            <input name="to" {...dateInput(to)} required />
          </label>
          <button type="submit" className="button">
            Apply range
          </button>
        </form>
      ) : null}
      <form className="filter-form" onSubmit={submitFilters} aria-label="Filters" key={`${jobType}|${tenant}`}>
        <label>
          Job type
          <input name="jobType" list="overview-job-types" defaultValue={jobType ?? ""} placeholder="all" />
          <datalist id="overview-job-types">
            {jobTypes.map((j) => (
              <option key={j} value={j} />
            ))}
          </datalist>
        </label>
        <label>
          Tenant
          <input name="tenant" list="overview-tenants" defaultValue={tenant ?? ""} placeholder="all" />
          <datalist id="overview-tenants">
            {tenants.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </label>
        <button type="submit" className="button">
          Apply
        </button>
        {jobType || tenant ? (
          <button type="button" className="button button-quiet" onClick={() => go({ jobType: null, tenant: null })}>
            Clear
          </button>
        ) : null}
      </form>
    </div>
  );
}
