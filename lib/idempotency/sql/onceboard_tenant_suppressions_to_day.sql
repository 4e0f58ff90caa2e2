-- onceboard_tenant_suppressions_to_day: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps tenant_suppressions_day the sum of tenant_suppressions_hour per tenant and UTC day (all job
-- types together): "which tenant" over 30 days reads 30 rows per tenant instead of 720 per job
-- type. Each row change adds NEW minus OLD; a day a DELETE brings to zero goes, so a tenant only
-- marked rows had leaves the ranking when they are deleted.
CREATE OR REPLACE FUNCTION onceboard.onceboard_tenant_suppressions_to_day() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.tenant_suppressions_hour;
  o onceboard.tenant_suppressions_hour;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.tenant_suppressions_day AS t (day, tenant_id, count)
  VALUES (date_bin('1 day', coalesce(n.hour, o.hour), timestamptz '2000-01-01 00:00:00+00'), coalesce(n.tenant_id, o.tenant_id),
          coalesce(n.count, 0) - coalesce(o.count, 0))
  ON CONFLICT (day, tenant_id) DO UPDATE SET count = t.count + EXCLUDED.count;
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.tenant_suppressions_day t
     WHERE t.day = date_bin('1 day', OLD.hour, timestamptz '2000-01-01 00:00:00+00') AND t.tenant_id = OLD.tenant_id AND t.count = 0;
  END IF;
  RETURN NULL;
END;
$$;
