-- SPDX-License-Identifier: MPL-2.0
-- 10_history_rollup_prune.sql - the function history_rollup_prune as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0030_history_coverage_rollup.sql.
CREATE OR REPLACE FUNCTION history_rollup_prune(p_limit integer) RETURNS bigint
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
    h date;
    n bigint := 0;
    k bigint;
BEGIN
    SELECT first_day INTO h FROM history_rollup_horizon LIMIT 1;
    IF h IS NULL OR h = '-infinity' THEN
        RETURN 0;
    END IF;
    DELETE FROM history_rollup_groups x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM history_rollup_groups y WHERE y.day < h LIMIT p_limit));
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    DELETE FROM history_rollup_group_pushes x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM history_rollup_group_pushes y WHERE y.day < h LIMIT p_limit));
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    DELETE FROM history_rollup_tests x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM history_rollup_tests y WHERE y.day < h LIMIT p_limit));
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    DELETE FROM history_rollup_test_groups x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM history_rollup_test_groups y WHERE y.day < h LIMIT p_limit));
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    DELETE FROM history_rollup_test_branches x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM history_rollup_test_branches y WHERE y.day < h LIMIT p_limit));
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    DELETE FROM history_rollup_group_variants x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM history_rollup_group_variants y WHERE y.day < h LIMIT p_limit));
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    DELETE FROM history_rollup_test_variants x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM history_rollup_test_variants y WHERE y.day < h LIMIT p_limit));
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    DELETE FROM history_rollup_run_days x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM history_rollup_run_days y WHERE y.day < h LIMIT p_limit));
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    DELETE FROM history_rollup_run_hours x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM history_rollup_run_hours y
         WHERE y.hour < h::timestamp AT TIME ZONE 'UTC' LIMIT p_limit));
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    DELETE FROM history_rollup_pushes x WHERE x.first_day < h - 7
       AND NOT EXISTS (SELECT 1 FROM history_rollup_push_groups_default d
                        WHERE d.repository = x.repository AND d.push = x.push);
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    RETURN n;
END
$$;
COMMENT ON FUNCTION history_rollup_prune(integer) IS
    'Removes up to the given number of rows of each rollup table that are of days before history_rollup_horizon (retention dropped them; queries never read them). Returns the rows removed.';
