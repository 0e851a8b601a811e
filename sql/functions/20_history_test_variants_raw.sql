-- SPDX-License-Identifier: MPL-2.0
-- 20_history_test_variants_raw.sql - the function history_test_variants_raw (migrations 0040
-- and 0041): a Firefox CI test's runs and failures per variant, from the raw rows.

-- The tests that failed in Taskcluster runs of [since, until), and per variant (platform and
-- build type: taskcluster_run_variants) their runs and failures there. A Taskcluster run
-- records failing tests only, so a test's runs in a variant are counted as history_flakes
-- counts them: the runs of each group it is known in (summed over its groups), plus the
-- runs that recorded it without a group; never fewer than the runs that recorded it. The
-- group rows of those groups are counted once per group and variant, not once per test.
CREATE OR REPLACE FUNCTION history_test_variants_raw(p_repository text, p_since timestamptz,
                                                     p_until timestamptz)
RETURNS TABLE (test text, variant text, runs bigint, failures bigint)
LANGUAGE sql STABLE AS $$
WITH failing AS (SELECT DISTINCT t.test FROM history_tests t
                   JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
                  WHERE r.repository = p_repository AND r.source = 'taskcluster' AND t.failed
                             AND t.run_at >= p_since AND t.run_at < p_until),
recorded AS (SELECT t.test, t.group_name, t.failed, v.variant
               FROM failing x JOIN history_tests t ON t.test = x.test
               JOIN taskcluster_run_variants v
                 ON v.history_run_id = t.run_id AND v.run_at = t.run_at
              WHERE v.repository = p_repository
                AND v.run_at >= p_since AND v.run_at < p_until
                AND t.run_at >= p_since AND t.run_at < p_until),
known AS (SELECT DISTINCT k.test, k.group_name FROM recorded k WHERE k.group_name <> ''),
group_runs AS MATERIALIZED (
        SELECT g.group_name, v.variant, count(*) AS runs
          FROM history_groups g JOIN taskcluster_run_variants v
            ON v.history_run_id = g.run_id AND v.run_at = g.run_at
         WHERE g.group_name IN (SELECT k.group_name FROM known k)
           AND v.repository = p_repository
           AND g.run_at >= p_since AND g.run_at < p_until
           AND v.run_at >= p_since AND v.run_at < p_until
         GROUP BY g.group_name, v.variant),
by_groups AS (SELECT k.test, g.variant, sum(g.runs) AS runs
                FROM known k JOIN group_runs g ON g.group_name = k.group_name
               GROUP BY k.test, g.variant),
by_records AS (SELECT k.test, k.variant, count(*) AS recorded,
                      count(*) FILTER (WHERE k.group_name = '') AS ungrouped,
                      count(*) FILTER (WHERE k.failed) AS failures
                 FROM recorded k GROUP BY k.test, k.variant)
SELECT coalesce(b.test, r.test), coalesce(b.variant, r.variant),
       greatest(coalesce(b.runs, 0) + coalesce(r.ungrouped, 0), coalesce(r.recorded, 0))::bigint,
       coalesce(r.failures, 0)
  FROM by_groups b FULL JOIN by_records r ON r.test = b.test AND r.variant = b.variant
$$;
COMMENT ON FUNCTION history_test_variants_raw(text, timestamptz, timestamptz) IS
    'Per test that failed in a Taskcluster run of the repository in [since, until) and per variant (taskcluster_run_variants): runs (of its groups, as history_flakes counts them) and failures, from the raw rows.';
