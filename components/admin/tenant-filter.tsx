/** A platform admin's tenant filter: a plain GET form, so the narrowed page is a link. */
export function TenantFilter({ tenant }: { tenant: string | undefined }) {
  return (
    <form method="get" action="/admin" className="filter-form" data-testid="admin-tenant-filter">
      <label>
        Tenant <input name="tenant" defaultValue={tenant ?? ""} placeholder="all" size={12} />
      </label>
      <button type="submit" className="button button-quiet">
        Apply
      </button>
    </form>
  );
}
