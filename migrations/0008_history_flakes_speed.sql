-- SPDX-License-Identifier: MPL-2.0
-- 0008_history_flakes_speed.sql - history_flakes (0006) with the same arguments, columns
-- and answers, faster at volume: the flaky-before-main rule counted, for every failure,
-- the distinct branches among all failures of the window (a correlated subquery over a
-- CTE, quadratic in the failures: 4-17 s at 1,000,000 outcomes, tests/bench/bench_history.c);
-- it now joins the failures of each test with each other on the test.

CREATE OR REPLACE FUNCTION history_flakes(p_repository text, p_since timestamptz, p_until timestamptz,
                               p_main_only boolean, p_min_branches integer,
                               p_flaky_window interval)
RETURNS TABLE (test text, group_name text, runs bigint, failures bigint,
               failure_rate double precision, pushes bigint, pushes_failed bigint,
               push_failure_chance double precision, branches bigint, prs bigint,
               first_failure_at timestamptz, first_failure_project text,
               first_failure_branch text, first_failure_push text,
               first_failure_revision text, first_failure_signature text, flaky boolean)
LANGUAGE sql STABLE AS $$
WITH scoped AS (
    SELECT * FROM history_test_runs v
     WHERE v.repository = p_repository AND v.run_at >= p_since AND v.run_at < p_until
), failing AS (
    SELECT v.test, v.branch_key, v.run_at
      FROM history_test_runs v
     WHERE v.repository = p_repository AND v.failed
       AND v.run_at >= p_since - p_flaky_window AND v.run_at < p_until
), flaky AS (
    -- each failure in the window with the failures of its test in the flaky_window before
    -- it: one hash join on the test, not a scan of every failure per failure
    SELECT DISTINCT f.test
      FROM failing f
      JOIN failing o ON o.test = f.test AND o.run_at > f.run_at - p_flaky_window
                    AND o.run_at <= f.run_at
     WHERE f.run_at >= p_since
     GROUP BY f.test, f.run_at
    HAVING count(DISTINCT o.branch_key) > p_min_branches
), stats AS (
    SELECT s.test, min(s.group_name) AS group_name, count(*) AS runs,
           count(*) FILTER (WHERE s.failed) AS failures,
           count(DISTINCT s.push) AS pushes,
           count(DISTINCT s.push) FILTER (WHERE s.failed) AS pushes_failed,
           count(DISTINCT s.branch_key) FILTER (WHERE s.failed) AS branches,
           count(DISTINCT s.pr) FILTER (WHERE s.failed) AS prs
      FROM scoped s
     WHERE NOT p_main_only OR s.branch_class = 'main'
     GROUP BY s.test
), signatures AS (
    -- the usual signature in the window, on any branch (main only or not)
    SELECT s.test, mode() WITHIN GROUP (ORDER BY s.signature) AS signature
      FROM scoped s
     WHERE s.failed AND s.signature IS NOT NULL
     GROUP BY s.test
)
SELECT st.test, st.group_name, st.runs, st.failures,
       CASE WHEN st.runs > 0 THEN st.failures::double precision / st.runs ELSE 0 END,
       st.pushes, st.pushes_failed,
       CASE WHEN st.pushes > 0 THEN st.pushes_failed::double precision / st.pushes ELSE 0 END,
       st.branches, st.prs, ff.run_at, ff.project, ff.branch, ff.push, ff.revision,
       ff.signature, fl.test IS NOT NULL
  FROM stats st
  LEFT JOIN flaky fl ON fl.test = st.test
  LEFT JOIN signatures sg ON sg.test = st.test
  LEFT JOIN LATERAL (
        SELECT r.run_at, r.project, r.branch, r.push, r.revision, t.signature
          FROM history_tests t
          JOIN history_runs r ON r.id = t.run_id
         WHERE r.repository = p_repository AND t.failed AND t.test = st.test
           AND t.signature = sg.signature
         ORDER BY r.run_at, r.id
         LIMIT 1) ff ON true
 WHERE st.failures > 0 OR fl.test IS NOT NULL
 ORDER BY fl.test IS NOT NULL DESC, st.branches DESC, st.failures DESC, st.test
$$;
