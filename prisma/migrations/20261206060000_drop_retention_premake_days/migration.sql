-- retention_settings.premake_days was read by nothing: how far ahead partitions are made is
-- premake_count, in partitions of partition_interval (the library's maintain() plans with those
-- two). A column beside them that looked like the setting and changed nothing is dropped, its range
-- check with it.
ALTER TABLE onceboard.retention_settings DROP COLUMN premake_days;
