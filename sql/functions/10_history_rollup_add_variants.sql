-- SPDX-License-Identifier: MPL-2.0
-- 10_history_rollup_add_variants.sql - the function history_rollup_add_variants (migration
-- 0041): the per-variant rollup of Taskcluster runs, kept by history_rollup_apply.

-- The variant figures: of the runs in rollup_runs (p_run_ids NULL: groups and tests), or of
-- the given runs when a day is counted again (p_run_ids: every run of the day, whose
-- per-test rows the caller has deleted; only history_rollup_test_variants is written then).
CREATE OR REPLACE FUNCTION history_rollup_add_variants(p_run_ids bigint[]) RETURNS void
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
    IF p_run_ids IS NULL THEN
        INSERT INTO history_rollup_group_variants AS x (repository, group_name, day, variant, runs)
        SELECT r.repository, g.group_name, r.day, v.variant, count(*)
          FROM rollup_runs r
         CROSS JOIN LATERAL (SELECT y.variant FROM taskcluster_run_variants y
                              WHERE y.history_run_id = r.id AND y.run_at = r.run_at) v
         CROSS JOIN LATERAL (SELECT y.group_name FROM history_groups y
                              WHERE y.run_id = r.id AND y.run_at = r.run_at) g
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (repository, group_name, day, variant) DO UPDATE SET runs = x.runs + EXCLUDED.runs;

        INSERT INTO history_rollup_test_variants AS x
               (repository, test, group_name, day, variant, recorded, failures)
        SELECT r.repository, t.test, t.group_name, r.day, v.variant, count(*),
               count(*) FILTER (WHERE t.failed)
          FROM rollup_runs r
         CROSS JOIN LATERAL (SELECT y.variant FROM taskcluster_run_variants y
                              WHERE y.history_run_id = r.id AND y.run_at = r.run_at) v
         CROSS JOIN LATERAL (SELECT y.test, y.group_name, y.failed FROM history_tests y
                              WHERE y.run_id = r.id AND y.run_at = r.run_at) t
         GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (repository, test, group_name, day, variant)
        DO UPDATE SET recorded = x.recorded + EXCLUDED.recorded,
                      failures = x.failures + EXCLUDED.failures;
    ELSE
        INSERT INTO history_rollup_test_variants AS x
               (repository, test, group_name, day, variant, recorded, failures)
        SELECT v.repository, t.test, t.group_name, (v.run_at AT TIME ZONE 'UTC')::date, v.variant,
               count(*), count(*) FILTER (WHERE t.failed)
          FROM taskcluster_run_variants v
          JOIN history_tests t ON t.run_id = v.history_run_id AND t.run_at = v.run_at
         WHERE v.history_run_id = ANY (p_run_ids)
         GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (repository, test, group_name, day, variant)
        DO UPDATE SET recorded = x.recorded + EXCLUDED.recorded,
                      failures = x.failures + EXCLUDED.failures;
    END IF;
END
$$;
COMMENT ON FUNCTION history_rollup_add_variants(bigint[]) IS
    'Adds the Taskcluster runs of rollup_runs (NULL), or the given runs of a day counted again (their test rows only), to history_rollup_group_variants and history_rollup_test_variants; called by history_rollup_apply.';
