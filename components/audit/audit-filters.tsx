import type { AuditPageFilters } from "@/lib/features/audit/audit-page-types";

/** The filter form: a plain GET form, so a filtered log is a link that can be shared. */
export function AuditFilters({ filters, platform }: { filters: AuditPageFilters; platform: boolean }) {
  return (
    <form method="get" action="/audit" className="filter-form" data-testid="audit-filters">
      {platform ? (
        <label>
          Tenant <input name="tenant" defaultValue={filters.tenant ?? ""} placeholder="all" size={10} />
        </label>
      ) : null}
      <label>
        Actor <input name="actor" defaultValue={filters.actor ?? ""} placeholder="any" size={14} />
      </label>
      <label>
        Action <input name="action" defaultValue={filters.action ?? ""} placeholder='any, or "token."' size={14} />
      </label>
      <label>
        Key or token <input name="target" defaultValue={filters.target ?? ""} placeholder="exact" size={18} />
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
