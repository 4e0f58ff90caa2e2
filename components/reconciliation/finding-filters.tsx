import {
  FINDING_KIND_LABELS,
  FINDING_KINDS,
  FINDING_STATES,
  type FindingFilters as Filters,
} from "@/lib/features/reconciliation/reconciliation-types";
import { UnknownOption } from "../ui/unknown-option";

/** The findings' filters: a plain GET form, so a filtered list is a link that can be shared. */
export function FindingFilters({ filters, platform }: { filters: Filters; platform: boolean }) {
  return (
    <form method="get" action="/reconciliation" className="filter-form" data-testid="finding-filters">
      {platform ? (
        <label>
          Tenant <input name="tenant" defaultValue={filters.tenant ?? ""} placeholder="all" size={12} />
        </label>
      ) : null}
      <label>
        Kind{" "}
        <select name="kind" defaultValue={filters.kind ?? ""}>
          <option value="">all</option>
          <UnknownOption value={filters.kind} choices={FINDING_KINDS} />
          {FINDING_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {FINDING_KIND_LABELS[kind]}
            </option>
          ))}
        </select>
      </label>
      <label>
        Provider <input name="provider" defaultValue={filters.provider ?? ""} placeholder="all" size={10} />
      </label>
      <label>
        Job type <input name="jobType" defaultValue={filters.jobType ?? ""} placeholder="all" size={14} />
      </label>
      <label>
        State{" "}
        <select name="state" defaultValue={filters.state ?? "open"}>
          <UnknownOption value={filters.state} choices={FINDING_STATES} />
          {FINDING_STATES.map((state) => (
            <option key={state} value={state}>
              {state}
            </option>
          ))}
        </select>
      </label>
      <label>
        Seen from <input name="from" defaultValue={filters.from ?? ""} placeholder="ISO 8601" size={20} />
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
