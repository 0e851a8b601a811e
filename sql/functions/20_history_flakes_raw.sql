-- SPDX-License-Identifier: MPL-2.0
-- 20_history_flakes_raw.sql - the function history_flakes_raw as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0032_history_flaky_try_authors.sql.
CREATE OR REPLACE FUNCTION history_flakes_raw(p_repository text, p_since timestamptz,
    p_until timestamptz, p_main_only boolean, p_min_branches integer, p_flaky_window interval)
RETURNS TABLE(test text, group_name text, runs bigint, failures bigint,
    failure_rate double precision, pushes bigint, pushes_failed bigint,
    push_failure_chance double precision, branches bigint, prs bigint,
    first_failure_at timestamptz, first_failure_project text, first_failure_branch text,
    first_failure_push text, first_failure_revision text, first_failure_signature text,
    flaky boolean)
LANGUAGE sql STABLE
SET jit = off
SET enable_nestloop = off
SET work_mem = '64MB'
AS $$
WITH failing AS (
    SELECT t.test, r.branch_key, r.branch_class, r.run_at
      FROM history_tests t
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
     WHERE r.repository = p_repository AND t.failed
       AND r.run_at >= p_since - p_flaky_window AND r.run_at < p_until
       AND t.run_at >= p_since - p_flaky_window AND t.run_at < p_until
), other_failing AS (
    -- the breadth that makes a test flaky counts changes under review only: a failure on a
    -- main branch (a regression that landed) is reported, never counted as breadth
    SELECT f.test, f.branch_key, f.run_at, (f.run_at AT TIME ZONE 'UTC')::date AS day
      FROM failing f WHERE f.branch_class <> 'main'
), main_tests AS (
    -- the tests that failed on a main branch since the day before other_failing's first: only
    -- they can have broken main (their runs are counted, not every failing test's)
    SELECT DISTINCT t.test
      FROM history_tests t
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
     WHERE r.repository = p_repository AND t.failed AND r.branch_class = 'main'
       AND r.run_at >= ((((p_since - p_flaky_window) AT TIME ZONE 'UTC')::date - 1)::timestamp
                        AT TIME ZONE 'UTC')
       AND t.run_at >= ((((p_since - p_flaky_window) AT TIME ZONE 'UTC')::date - 1)::timestamp
                        AT TIME ZONE 'UTC')
       AND r.run_at < p_until AND t.run_at < p_until
), main_broken AS (
    -- the UTC days on which a test failed in more than half of its runs on the main branches
    -- (runs as history_run_marks counts them, in slots of a day from the day before the
    -- first day of other_failing: finite, where since may be -infinity)
    SELECT m.test, lo.day + m.slot AS day
      FROM (SELECT min(o.day) - 1 AS day FROM other_failing o) lo
     CROSS JOIN LATERAL history_run_marks(p_repository, ARRAY(
                SELECT DISTINCT o.test FROM other_failing o
                 WHERE o.test IN (SELECT mt.test FROM main_tests mt)),
                lo.day::timestamp AT TIME ZONE 'UTC', p_until, 86400) m
     WHERE m.main AND m.failures * 2 > m.runs
), counted AS (
    -- the failures under review that are breadth: not on a day when, or after a day when,
    -- main was broken by the test (try pushes based on a regression that landed)
    SELECT o.test, o.branch_key, o.run_at
      FROM other_failing o
     WHERE NOT EXISTS (SELECT 1 FROM main_broken b
                        WHERE b.test = o.test AND b.day IN (o.day, o.day - 1))
), flaky AS (
    -- each counted failure in the window with the counted failures of its test in the
    -- flaky_window before it: one hash join on the test, not a scan per failure
    SELECT DISTINCT f.test
      FROM counted f
      JOIN counted o ON o.test = f.test AND o.run_at > f.run_at - p_flaky_window
                    AND o.run_at <= f.run_at
     WHERE f.run_at >= p_since
     GROUP BY f.test, f.run_at
    HAVING count(DISTINCT o.branch_key) > p_min_branches
), listed AS (
    SELECT DISTINCT f.test FROM failing f WHERE f.run_at >= p_since
), recorded AS (
    -- the recorded rows of the listed tests in the window, on any branch
    SELECT t.run_id, t.run_at, t.test, t.group_name, t.failed, t.signature, r.push, r.branch_key, r.pr,
           r.branch_class, r.complete_results,
           (NOT p_main_only OR r.branch_class = 'main') AS in_scope,
           NOT EXISTS (SELECT 1 FROM main_broken b
                        WHERE b.test = t.test
                          AND b.day IN ((t.run_at AT TIME ZONE 'UTC')::date,
                                        (t.run_at AT TIME ZONE 'UTC')::date - 1)) AS breadth
      FROM listed l
      JOIN history_tests t ON t.test = l.test
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
     WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until
       AND t.run_at >= p_since AND t.run_at < p_until
), known AS (
    SELECT DISTINCT t.test, t.group_name
      FROM listed l
      JOIN history_tests t ON t.test = l.test AND t.group_name <> ''
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at AND NOT r.complete_results
     WHERE r.repository = p_repository
), known_groups AS (
    SELECT DISTINCT k.group_name FROM known k
), group_pushes AS (
    -- the failures-only runs in scope of each known group in the window: one join over the
    -- window's group rows (a look-up per known group scanned the window's runs once per
    -- group, 800 times over at 50 million outcomes)
    SELECT g.group_name, r.push
      FROM history_groups g
      JOIN history_runs r ON r.id = g.run_id AND r.run_at = g.run_at
     WHERE g.group_name IN (SELECT kg.group_name FROM known_groups kg)
       AND g.run_at >= p_since AND g.run_at < p_until
       AND r.repository = p_repository AND NOT r.complete_results
       AND r.run_at >= p_since AND r.run_at < p_until
       AND (NOT p_main_only OR r.branch_class = 'main')
), group_runs AS (
    SELECT gp.group_name, count(*) AS runs FROM group_pushes gp GROUP BY gp.group_name
), overlap AS (
    -- per listed test and known group: the group's runs in scope that recorded the test
    -- (a key look-up per recorded row, not a join with every group of those runs)
    SELECT k.test, k.group_name, count(*) AS runs
      FROM known k
      JOIN recorded rc ON rc.test = k.test AND rc.in_scope AND NOT rc.complete_results
     WHERE (SELECT true FROM history_groups g
             WHERE g.run_id = rc.run_id AND g.run_at = rc.run_at
               AND g.group_name = k.group_name)
     GROUP BY k.test, k.group_name
), derived AS (
    -- per listed test: its derived rows (the runs of its groups that did not record it)
    SELECT k.test, sum(gr.runs - coalesce(o.runs, 0)) AS runs,
           min(k.group_name) FILTER (WHERE gr.runs > coalesce(o.runs, 0)) AS group_name
      FROM known k
      JOIN group_runs gr ON gr.group_name = k.group_name
      LEFT JOIN overlap o ON o.test = k.test AND o.group_name = k.group_name
     GROUP BY k.test
), pushes AS (
    SELECT p.test, count(DISTINCT p.push) AS pushes
      FROM (SELECT rc.test, rc.push FROM recorded rc WHERE rc.in_scope
            UNION ALL
            SELECT k.test, gp.push FROM known k JOIN group_pushes gp ON gp.group_name = k.group_name) p
     GROUP BY p.test
), ff AS (
    -- each listed test's first failure, whatever its signature, on any branch at any time:
    -- one join (a look-up per test hashed every run of the history once per test under
    -- enable_nestloop = off)
    SELECT DISTINCT ON (t.test) t.test, r.run_at, r.project, r.branch, r.push, r.revision,
           t.signature
      FROM listed l
      JOIN history_tests t ON t.test = l.test AND t.failed
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
     WHERE r.repository = p_repository
     ORDER BY t.test, r.run_at, r.id
), stats AS (
    SELECT l.test, least(rs.group_name, ds.group_name) AS group_name,
           coalesce(rs.runs, 0) + coalesce(ds.runs, 0) AS runs,
           coalesce(rs.failures, 0) AS failures, coalesce(ps.pushes, 0) AS pushes,
           coalesce(rs.pushes_failed, 0) AS pushes_failed,
           coalesce(rs.branches, 0) AS branches, coalesce(rs.prs, 0) AS prs
      FROM listed l
      LEFT JOIN (SELECT rc.test, min(rc.group_name) AS group_name, count(*) AS runs,
                        count(*) FILTER (WHERE rc.failed) AS failures,
                        count(DISTINCT rc.push) FILTER (WHERE rc.failed) AS pushes_failed,
                        count(DISTINCT rc.branch_key)
                            FILTER (WHERE rc.failed AND rc.branch_class <> 'main'
                                          AND rc.breadth) AS branches,
                        count(DISTINCT rc.pr) FILTER (WHERE rc.failed) AS prs
                   FROM recorded rc
                  WHERE rc.in_scope
                  GROUP BY rc.test) rs ON rs.test = l.test
      LEFT JOIN derived ds ON ds.test = l.test
      LEFT JOIN pushes ps ON ps.test = l.test
     WHERE coalesce(rs.runs, 0) + coalesce(ds.runs, 0) > 0
)
SELECT st.test, st.group_name, st.runs, st.failures,
       CASE WHEN st.runs > 0 THEN st.failures::double precision / st.runs ELSE 0 END,
       st.pushes, st.pushes_failed,
       CASE WHEN st.pushes > 0 THEN st.pushes_failed::double precision / st.pushes ELSE 0 END,
       st.branches, st.prs, ff.run_at, ff.project, ff.branch, ff.push, ff.revision,
       ff.signature, fl.test IS NOT NULL
  FROM stats st
  LEFT JOIN flaky fl ON fl.test = st.test
  LEFT JOIN ff ON ff.test = st.test
 WHERE st.failures > 0 OR fl.test IS NOT NULL
 ORDER BY fl.test IS NOT NULL DESC, st.branches DESC, st.failures DESC, st.test
$$;
COMMENT ON FUNCTION history_flakes_raw(text, timestamptz, timestamptz, boolean, integer, interval) IS
    'history_flakes from the raw rows (any window). Breadth: distinct branches of class other (a try push''s author, a pull request, a project) with failures of the test within flaky_window, leaving out the failures on a UTC day when, or after a day when, the test failed in more than half of its runs on the main branches (migration 0032).';
