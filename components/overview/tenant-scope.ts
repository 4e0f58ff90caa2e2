import type { OverviewResponse } from "@/lib/features/overview/contract";

/** Whether a part of the response (a key of OverviewResponse.tenantScoped) answers for the tenant filter. */
export const answersForTenant = (data: OverviewResponse, part: string): boolean =>
  data.tenant === null || data.tenantScoped.includes(part);

/** What a part that cannot answer for the tenant filter says instead. */
export const EVERY_TENANT = "all tenants";

/** Whether a part was withheld from a tenant session (OverviewResponse.withheld). */
export const withheld = (data: OverviewResponse, part: string): boolean => data.withheld.includes(part);

/** What a withheld part says instead of a number. */
export const WITHHELD_TEXT = "Not shown to a tenant: counted only for every tenant (the rollups carry no tenant).";
