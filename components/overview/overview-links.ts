/** Links from the Overview to the Keys page (built by the auth work, issue 10). */
export const keyHref = (tenant: string, key: string) =>
  `/keys?tenant=${encodeURIComponent(tenant)}&key=${encodeURIComponent(key)}`;
export const jobTypeHref = (jobType: string) => `/keys?jobType=${encodeURIComponent(jobType)}`;
export const tenantOverviewHref = (tenant: string) => `/overview?tenant=${encodeURIComponent(tenant)}`;
