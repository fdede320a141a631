-- Spans and log records are partitioned by time, so retention drops a whole day at once
-- instead of deleting its rows one by one (src/erasure/partitions.ts, docs/security.md
-- "Retention"): spans by end_ns, log records by time_ns, one partition per UTC day, made a
-- few days ahead by tapedeck; rows of a day without a partition go to the default partition.
--
-- A partitioned table's unique keys must hold its partition column, so the keys become
-- (tenant, trace_id, span_id, end_ns) and (tenant, record_key, time_ns). Deduplication does not
-- change: ingest reads a trace's stored spans under the trace's lock and writes only the ones
-- not stored (src/ingest/write-spans.ts), and a log record's key already holds its time.
--
-- Existing rows are not copied: the old table becomes the partition of every time up to the
-- end of the day its newest row ended (at most today), after one scan that proves its rows
-- fit, and it gets the new key's index. Rows dated later than now move to the default
-- partition. The views over the tables are made again as they were, with their grants.

CREATE FUNCTION pg_temp.copy_grants(p_from regclass, p_to regclass) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE g record;
BEGIN
  FOR g IN
    SELECT a.privilege_type, a.grantee, a.is_grantable
      FROM pg_class c, aclexplode(c.relacl) a
     WHERE c.oid = p_from AND a.grantee <> c.relowner
  LOOP
    EXECUTE format('GRANT %s ON %s TO %s%s', g.privilege_type, p_to,
                   CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END,
                   CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
  END LOOP;
END $$;

CREATE FUNCTION pg_temp.partition_by_time(p_table text, p_column text, p_key text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  day constant bigint := 86400000000000;
  old_name text := p_table || '_before_partitions';
  parent text := format('tapedeck_store.%I', p_table);
  old_table text := format('tapedeck_store.%I', old_name);
  idx record;
  part text;
  old_pkey text;
  newest bigint;
  bound bigint;
BEGIN
  EXECUTE format('ALTER TABLE %s RENAME TO %I', parent, old_name);
  -- Index names are the schema's: the old ones make way for the new table's.
  FOR idx IN
    SELECT i.relname, x.indisprimary
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
     WHERE x.indrelid = old_table::regclass
  LOOP
    EXECUTE format('ALTER INDEX tapedeck_store.%I RENAME TO %I', idx.relname, 'old_' || idx.relname);
    IF idx.indisprimary THEN
      old_pkey := 'old_' || idx.relname;
    END IF;
  END LOOP;
  EXECUTE format(
    'CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION) PARTITION BY RANGE (%I)',
    parent, old_table, p_column);
  EXECUTE format('ALTER TABLE %s ADD PRIMARY KEY (%s)', parent, p_key);
  PERFORM pg_temp.copy_grants(old_table::regclass, parent::regclass);
  -- Every other index of the old table, on the new one (the old table's copies then serve
  -- as its partition's).
  FOR idx IN
    SELECT i.relname, pg_get_indexdef(x.indexrelid) AS def
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
     WHERE x.indrelid = old_table::regclass AND NOT x.indisprimary
  LOOP
    EXECUTE regexp_replace(idx.def, '^CREATE (UNIQUE )?INDEX \S+ ON \S+ ',
                           format('CREATE \1INDEX %I ON %s ', substr(idx.relname, 5), parent));
  END LOOP;
  EXECUTE format('CREATE TABLE tapedeck_store.%I PARTITION OF %s DEFAULT', p_table || '_default', parent);

  EXECUTE format('SELECT max(%I) FROM %s', p_column, old_table) INTO newest;
  IF newest IS NULL THEN
    EXECUTE format('DROP TABLE %s', old_table);
  ELSE
    -- The end of the day of the newest row, or of today when rows are dated in the future.
    bound := least(newest, (extract(epoch FROM clock_timestamp()) * 1e9)::bigint);
    bound := (bound - (((bound % day) + day) % day)) + day;
    EXECUTE format('WITH moved AS (DELETE FROM %s WHERE %I >= $1 RETURNING *) INSERT INTO %s SELECT * FROM moved',
                   old_table, p_column, parent) USING bound;
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%I < %s)', old_table, old_name || '_range', p_column, bound);
    -- A table has one primary key: the new one's index is built on attaching.
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', old_table, old_pkey);
    EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (MINVALUE) TO (%s)', parent, old_table, bound);
  END IF;

  -- The table's tenant policy (0013), and its default partition's, which a role granted every
  -- table of the schema could read directly (src/erasure/partitions.ts gives each day's its own).
  FOREACH part IN ARRAY ARRAY[p_table, p_table || '_default'] LOOP
    EXECUTE format('ALTER TABLE tapedeck_store.%I ENABLE ROW LEVEL SECURITY', part);
    EXECUTE format(
      'CREATE POLICY tenant_rows ON tapedeck_store.%I USING (tenant IS NOT DISTINCT FROM COALESCE(tapedeck_store.tenant_of_role(current_user), tenant))',
      part);
  END LOOP;
END $$;

-- The views reading spans or logs, directly or through another view, with what makes them
-- what they are: their text, options (security_invoker), comment and grants.
CREATE TEMP TABLE partitioned_views ON COMMIT DROP AS
WITH RECURSIVE dependents(oid, depth) AS (
  SELECT r.ev_class, 1
    FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
   WHERE d.classid = 'pg_rewrite'::regclass
     AND d.refobjid IN ('tapedeck_store.spans'::regclass, 'tapedeck_store.logs'::regclass)
     AND r.ev_class NOT IN ('tapedeck_store.spans'::regclass, 'tapedeck_store.logs'::regclass)
  UNION
  SELECT r.ev_class, dep.depth + 1
    FROM dependents dep
    JOIN pg_depend d ON d.refobjid = dep.oid AND d.classid = 'pg_rewrite'::regclass
    JOIN pg_rewrite r ON r.oid = d.objid
   WHERE r.ev_class <> dep.oid
)
SELECT c.oid, format('%I.%I', n.nspname, c.relname) AS name, max(dep.depth) AS depth,
       pg_get_viewdef(c.oid) AS definition, c.reloptions, obj_description(c.oid, 'pg_class') AS comment
  FROM dependents dep JOIN pg_class c ON c.oid = dep.oid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'v'
 GROUP BY c.oid, n.nspname, c.relname;

-- The views are dropped, the tables made again, the views made again.
CREATE TEMP TABLE partitioned_view_grants ON COMMIT DROP AS
SELECT v.name, a.privilege_type, a.grantee, a.is_grantable
  FROM partitioned_views v JOIN pg_class c ON c.oid = v.oid, aclexplode(c.relacl) a
 WHERE a.grantee <> c.relowner;

DO $$
DECLARE v record;
BEGIN
  FOR v IN SELECT name FROM partitioned_views ORDER BY depth DESC LOOP
    EXECUTE format('DROP VIEW %s', v.name);
  END LOOP;
END $$;

SELECT pg_temp.partition_by_time('spans', 'end_ns', 'tenant, trace_id, span_id, end_ns');
SELECT pg_temp.partition_by_time('logs', 'time_ns', 'tenant, record_key, time_ns');

DO $$
DECLARE v record; g record;
BEGIN
  FOR v IN SELECT * FROM partitioned_views ORDER BY depth LOOP
    EXECUTE format('CREATE VIEW %s%s AS %s', v.name,
                   CASE WHEN v.reloptions IS NULL THEN '' ELSE format(' WITH (%s)', array_to_string(v.reloptions, ', ')) END,
                   v.definition);
    IF v.comment IS NOT NULL THEN
      EXECUTE format('COMMENT ON VIEW %s IS %L', v.name, v.comment);
    END IF;
    FOR g IN SELECT * FROM partitioned_view_grants WHERE name = v.name LOOP
      EXECUTE format('GRANT %s ON %s TO %s%s', g.privilege_type, v.name,
                     CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END,
                     CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
  END LOOP;
END $$;

DROP FUNCTION pg_temp.partition_by_time(text, text, text);
DROP FUNCTION pg_temp.copy_grants(regclass, regclass);
