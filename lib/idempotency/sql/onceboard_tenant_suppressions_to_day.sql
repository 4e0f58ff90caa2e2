-- onceboard_tenant_suppressions_to_day: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Adds each tenant_suppressions_hour upsert's increment to the tenant's UTC day (all job types
-- together): "which tenant" over 30 days reads 30 rows per tenant instead of 720 per job type.
CREATE OR REPLACE FUNCTION onceboard.onceboard_tenant_suppressions_to_day() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO onceboard.tenant_suppressions_day AS t (day, tenant_id, count)
  VALUES (date_bin('1 day', NEW.hour, timestamptz '2000-01-01 00:00:00+00'), NEW.tenant_id,
          NEW.count - CASE WHEN TG_OP = 'UPDATE' THEN OLD.count ELSE 0 END)
  ON CONFLICT (day, tenant_id) DO UPDATE SET count = t.count + EXCLUDED.count;
  RETURN NULL;
END;
$$;
