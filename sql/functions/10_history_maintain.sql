-- SPDX-License-Identifier: MPL-2.0
-- 10_history_maintain.sql - the function history_maintain as it stands: `retrig migrate` applies
-- it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0020_history_rollup.sql.

-- Retention: the rollup's days go with the partitions retention drops.
CREATE OR REPLACE FUNCTION history_maintain(p_retention_days integer) RETURNS integer
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
    t text;
    n integer;
    kept date;
    first_before date;
BEGIN
    -- one maintainer at a time; another replica's call returns at once
    IF NOT pg_try_advisory_xact_lock(7274, hashtext('history_maintain')) THEN
        RETURN -1;
    END IF;
    SELECT min(to_date((regexp_match(c.relname, '_p(\d{4}_\d{2}_\d{2})$'))[1], 'YYYY_MM_DD'))
      INTO first_before
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'public.history_runs'::regclass;
    UPDATE partman.part_config
       SET retention = CASE WHEN p_retention_days > 0 THEN p_retention_days || ' days' END
     WHERE parent_table IN ('public.history_runs', 'public.history_groups', 'public.history_tests')
       AND retention IS DISTINCT FROM CASE WHEN p_retention_days > 0 THEN p_retention_days || ' days' END;
    -- the pushes' days are kept a week longer: a push first seen on a day that goes may have
    -- run on a day kept, and history_flakes_rollup reads its days from the first day kept
    UPDATE partman.part_config
       SET retention = CASE WHEN p_retention_days > 0 THEN p_retention_days + 7 || ' days' END
     WHERE parent_table = 'public.history_rollup_push_groups'
       AND retention IS DISTINCT FROM CASE WHEN p_retention_days > 0 THEN p_retention_days + 7 || ' days' END;
    FOREACH t IN ARRAY ARRAY['public.history_runs', 'public.history_groups', 'public.history_tests']
    LOOP
        PERFORM partman.run_maintenance(t, p_jobmon := false);
    END LOOP;
    -- the first day retention kept: when days went, the rollup answers from it on
    SELECT min(to_date((regexp_match(c.relname, '_p(\d{4}_\d{2}_\d{2})$'))[1], 'YYYY_MM_DD'))
      INTO kept
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'public.history_runs'::regclass;
    IF kept IS NOT NULL AND first_before IS NOT NULL AND kept > first_before THEN
        UPDATE history_rollup_horizon SET first_day = kept WHERE first_day < kept;
    END IF;
    PERFORM partman.run_maintenance('public.history_rollup_push_groups', p_jobmon := false);
    SELECT count(*) INTO n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent
     WHERE c.relname IN ('history_runs', 'history_groups', 'history_tests');
    RETURN n;
END
$$;
COMMENT ON FUNCTION history_maintain(integer) IS
    'Test history retention: sets it to the given days (0 keeps everything), creates the week ahead and drops the days past retention as whole partitions (pg_partman run_maintenance); the rollup answers from the first day kept on (history_rollup_horizon). Returns the number of partitions, -1 when another session is maintaining.';
