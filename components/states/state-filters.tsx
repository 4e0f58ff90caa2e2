import type { StatesFilters } from "@/lib/features/keys-and-effects/states-types";

/** The filter form: a plain GET form (the list it shows kept), so a state's list is a link that can be shared. */
export function StateFilters({ filters, platform }: { filters: StatesFilters; platform: boolean }) {
  return (
    <form method="get" action="/states" className="filter-form" data-testid="state-filters">
      {filters.state ? <input type="hidden" name="state" value={filters.state} /> : null}
      {platform ? (
        <label>
          Tenant <input name="tenant" defaultValue={filters.tenant ?? ""} placeholder="every tenant" size={12} />
        </label>
      ) : null}
      <label>
        Job type <input name="jobType" defaultValue={filters.jobType ?? ""} placeholder="every job type" size={14} />
      </label>
      <label>
        Created from <input name="from" defaultValue={filters.from ?? ""} placeholder="ISO 8601" size={20} />
      </label>
      <label>
        to <input name="to" defaultValue={filters.to ?? ""} placeholder="ISO 8601" size={20} />
      </label>
      <button type="submit" className="button button-quiet">
        Apply
      </button>
    </form>
  );
}
