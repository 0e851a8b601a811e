-- SPDX-License-Identifier: MPL-2.0
-- 20_history_rollup_apply.sql - the function history_rollup_apply as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0030_history_coverage_rollup.sql; it keeps
-- the per-variant rollup of migration 0041 too.
CREATE OR REPLACE FUNCTION history_rollup_apply(p_limit integer) RETURNS integer
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
    n integer;
    redo_runs bigint[];
BEGIN
    IF NOT pg_try_advisory_xact_lock(7274, hashtext('history_rollup_apply')) THEN
        RETURN -1;
    END IF;
    CREATE TEMP TABLE IF NOT EXISTS rollup_chunk (run_id bigint, run_at timestamptz,
                                                  added boolean, redo boolean) ON COMMIT DROP;
    TRUNCATE rollup_chunk;
    WITH taken AS (
        DELETE FROM history_rollup_queue q
         WHERE q.run_id IN (SELECT x.run_id FROM history_rollup_queue x ORDER BY x.run_id
                             LIMIT p_limit FOR UPDATE SKIP LOCKED)
        RETURNING q.run_id, q.run_at, q.added, q.redo)
    INSERT INTO rollup_chunk SELECT * FROM taken;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 0 THEN
        RETURN 0;
    END IF;

    -- Days of merged runs: their per-test rows are counted again from the raw rows (every
    -- run of the repository and day not waiting to be added).
    CREATE TEMP TABLE IF NOT EXISTS rollup_redo (repository text, day date) ON COMMIT DROP;
    TRUNCATE rollup_redo;
    INSERT INTO rollup_redo
    SELECT DISTINCT r.repository, (r.run_at AT TIME ZONE 'UTC')::date
      FROM rollup_chunk c JOIN history_runs r ON r.id = c.run_id AND r.run_at = c.run_at
     WHERE c.redo;
    IF FOUND THEN
        DELETE FROM history_rollup_tests x USING rollup_redo d
         WHERE x.repository = d.repository AND x.day = d.day;
        DELETE FROM history_rollup_test_branches x USING rollup_redo d
         WHERE x.repository = d.repository AND x.day = d.day;
        DELETE FROM history_rollup_test_variants x USING rollup_redo d
         WHERE x.repository = d.repository AND x.day = d.day;
        redo_runs := ARRAY(
            SELECT r.id FROM rollup_redo d
              JOIN history_runs r ON r.repository = d.repository
               AND r.run_at >= d.day::timestamp AT TIME ZONE 'UTC'
               AND r.run_at < (d.day + 1)::timestamp AT TIME ZONE 'UTC'
             WHERE NOT EXISTS (SELECT 1 FROM history_rollup_queue q WHERE q.run_id = r.id AND q.added)
               AND NOT EXISTS (SELECT 1 FROM rollup_chunk c WHERE c.run_id = r.id AND c.added));
        PERFORM history_rollup_add_tests(redo_runs);
        PERFORM history_rollup_add_variants(redo_runs);
    END IF;

    -- The new runs.
    CREATE TEMP TABLE IF NOT EXISTS rollup_runs (id bigint, run_at timestamptz, day date,
        repository text, branch_class text, branch_key text, push text, pr integer,
        complete_results boolean, project text, branch text, revision text, source text)
        ON COMMIT DROP;
    TRUNCATE rollup_runs;
    INSERT INTO rollup_runs
    SELECT r.id, r.run_at, (r.run_at AT TIME ZONE 'UTC')::date, r.repository, r.branch_class,
           r.branch_key, r.push, r.pr, r.complete_results, r.project, r.branch, r.revision,
           r.source
      FROM rollup_chunk c
     CROSS JOIN LATERAL (SELECT x.* FROM history_runs x
                          WHERE x.id = c.run_id AND x.run_at = c.run_at) r
     WHERE c.added;
    PERFORM history_rollup_add_groups();
    PERFORM history_rollup_add_tests(NULL);
    PERFORM history_rollup_add_runs();
    PERFORM history_rollup_add_variants(NULL);
    RETURN n;
END
$$;
COMMENT ON FUNCTION history_rollup_apply(integer) IS
    'Adds up to the given number of queued test history runs to the per-day rollup (history_rollup_*), in one transaction; returns how many, 0 when none are queued, -1 when another session holds the rollup''s lock.';
