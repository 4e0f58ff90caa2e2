import type { ViolationListFilters } from "@/lib/features/violations/violations-types";

/** The filter form: a plain GET form, so the list is a link that can be shared. */
export function ViolationFilters({ filters, platform }: { filters: ViolationListFilters; platform: boolean }) {
  return (
    <form method="get" action="/violations" className="filter-form" data-testid="violation-filters">
      {platform ? (
        <label>
          Tenant <input name="tenant" defaultValue={filters.tenant ?? ""} placeholder="all" size={12} />
        </label>
      ) : null}
      <label>
        Job type <input name="jobType" defaultValue={filters.jobType ?? ""} placeholder="all" size={14} />
      </label>
      <label>
        Constraint <input name="constraint" defaultValue={filters.constraint ?? ""} placeholder="all" size={18} />
      </label>
      <label>
        From <input name="from" defaultValue={filters.from ?? ""} placeholder="ISO 8601" size={20} />
      </label>
      <label>
        To <input name="to" defaultValue={filters.to ?? ""} placeholder="ISO 8601" size={20} />
      </label>
      <button type="submit" className="button button-quiet">
        Apply
      </button>
    </form>
  );
}
