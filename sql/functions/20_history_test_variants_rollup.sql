-- SPDX-License-Identifier: MPL-2.0
-- 20_history_test_variants_rollup.sql - the function history_test_variants_rollup (migration
-- 0041): history_test_variants_raw's answers from the per-day rollup, for whole UTC days.
CREATE OR REPLACE FUNCTION history_test_variants_rollup(p_repository text, p_since timestamptz,
                                                        p_until timestamptz)
RETURNS TABLE (test text, variant text, runs bigint, failures bigint)
LANGUAGE sql STABLE AS $$
WITH days AS (SELECT greatest((p_since AT TIME ZONE 'UTC')::date,
                              (SELECT h.first_day FROM history_rollup_horizon h LIMIT 1)) AS first,
                     (p_until AT TIME ZONE 'UTC')::date AS last),
rows AS (SELECT x.test, x.group_name, x.variant, sum(x.recorded) AS recorded,
                sum(x.failures) AS failures
           FROM history_rollup_test_variants x, days d
          WHERE x.repository = p_repository AND x.day >= d.first AND x.day < d.last
          GROUP BY 1, 2, 3),
failing AS (SELECT DISTINCT f.test FROM rows f WHERE f.failures > 0),
recorded AS (SELECT k.* FROM rows k WHERE k.test IN (SELECT f.test FROM failing f)),
known AS (SELECT DISTINCT k.test, k.group_name FROM recorded k WHERE k.group_name <> ''),
group_runs AS MATERIALIZED (
        SELECT g.group_name, g.variant, sum(g.runs) AS runs
          FROM history_rollup_group_variants g, days d
         WHERE g.repository = p_repository AND g.day >= d.first AND g.day < d.last
           AND g.group_name IN (SELECT k.group_name FROM known k)
         GROUP BY 1, 2),
by_groups AS (SELECT k.test, g.variant, sum(g.runs) AS runs
                FROM known k JOIN group_runs g ON g.group_name = k.group_name
               GROUP BY k.test, g.variant),
by_records AS (SELECT k.test, k.variant, sum(k.recorded) AS recorded,
                      coalesce(sum(k.recorded) FILTER (WHERE k.group_name = ''), 0) AS ungrouped,
                      sum(k.failures) AS failures
                 FROM recorded k GROUP BY k.test, k.variant)
SELECT coalesce(b.test, r.test), coalesce(b.variant, r.variant),
       greatest(coalesce(b.runs, 0) + coalesce(r.ungrouped, 0), coalesce(r.recorded, 0))::bigint,
       coalesce(r.failures, 0)::bigint
  FROM by_groups b FULL JOIN by_records r ON r.test = b.test AND r.variant = b.variant
$$;
COMMENT ON FUNCTION history_test_variants_rollup(text, timestamptz, timestamptz) IS
    'history_test_variants_raw''s answers from history_rollup_test_variants and history_rollup_group_variants, for [since, until) of whole UTC days (days before history_rollup_horizon are not counted; runs still queued for the rollup are not yet).';
