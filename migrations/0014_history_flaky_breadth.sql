-- SPDX-License-Identifier: MPL-2.0
-- 0014_history_flaky_breadth.sql - history_flakes (0009) with the same arguments and columns,
-- two rules changed (issue 17, items 12 and 13):
--   breadth: a test is flaky when it failed on more than p_min_branches distinct branches
--            within p_flaky_window, counting only changes under review: branch class
--            'other' (a try push, a pull request, a branch other than the main ones). A
--            failure on a main branch (history_main_projects, or a JUnit run ingested with
--            --main) is reported in failures and pushes_failed, and in the main-only view,
--            but never counted as breadth: a regression that landed on main and then fails
--            in every later try push must not look flaky. The branches column counts the
--            same (0 in the main-only view).
--   first failure: the test's first failure on any branch at any time, whatever its
--            signature; first_failure_signature is the signature of that failure.
-- What one branch is (history_runs.branch_key): a try push for Taskcluster's try projects
-- ("try:<push>"), the project for other Taskcluster projects, "pr:<n>" for a pull request
-- and the branch name otherwise for JUnit and GitHub runs ("fork:<owner/name>:<branch>" for a
-- fork's branch without a pull request).

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
WITH failing AS (
    SELECT t.test, r.branch_key, r.branch_class, r.run_at
      FROM history_tests t
      JOIN history_runs r ON r.id = t.run_id
     WHERE r.repository = p_repository AND t.failed
       AND r.run_at >= p_since - p_flaky_window AND r.run_at < p_until
), other_failing AS (
    -- the breadth that makes a test flaky counts changes under review only: a failure on a
    -- main branch (a regression that landed) is reported, never counted as breadth
    SELECT f.test, f.branch_key, f.run_at FROM failing f WHERE f.branch_class <> 'main'
), flaky AS (
    -- each failure in the window with the failures of its test in the flaky_window before
    -- it: one hash join on the test, not a scan of every failure per failure
    SELECT DISTINCT f.test
      FROM other_failing f
      JOIN other_failing o ON o.test = f.test AND o.run_at > f.run_at - p_flaky_window
                    AND o.run_at <= f.run_at
     WHERE f.run_at >= p_since
     GROUP BY f.test, f.run_at
    HAVING count(DISTINCT o.branch_key) > p_min_branches
), listed AS (
    SELECT DISTINCT f.test FROM failing f WHERE f.run_at >= p_since
), recorded AS (
    -- the recorded rows of the listed tests in the window, on any branch
    SELECT t.run_id, t.test, t.group_name, t.failed, t.signature, r.push, r.branch_key, r.pr,
           r.branch_class, r.complete_results,
           (NOT p_main_only OR r.branch_class = 'main') AS in_scope
      FROM listed l
      JOIN history_tests t ON t.test = l.test
      JOIN history_runs r ON r.id = t.run_id
     WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until
), known AS (
    SELECT DISTINCT t.test, t.group_name
      FROM listed l
      JOIN history_tests t ON t.test = l.test AND t.group_name <> ''
      JOIN history_runs r ON r.id = t.run_id AND NOT r.complete_results
     WHERE r.repository = p_repository
), known_groups AS (
    SELECT DISTINCT k.group_name FROM known k
), group_pushes AS (
    -- the failures-only runs in scope of each known group, through the group's index
    SELECT kg.group_name, r.push
      FROM known_groups kg
     CROSS JOIN LATERAL (SELECT g.run_id FROM history_groups g
                          WHERE g.group_name = kg.group_name OFFSET 0) g
      JOIN history_runs r ON r.id = g.run_id
     WHERE r.repository = p_repository AND NOT r.complete_results
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
             WHERE g.run_id = rc.run_id AND g.group_name = k.group_name)
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
                            FILTER (WHERE rc.failed AND rc.branch_class <> 'main') AS branches,
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
  LEFT JOIN LATERAL (
        -- the test's first failure, whatever its signature, on any branch at any time
        SELECT r.run_at, r.project, r.branch, r.push, r.revision, t.signature
          FROM history_tests t
          JOIN history_runs r ON r.id = t.run_id
         WHERE r.repository = p_repository AND t.failed AND t.test = st.test
         ORDER BY r.run_at, r.id
         LIMIT 1) ff ON true
 WHERE st.failures > 0 OR fl.test IS NOT NULL
 ORDER BY fl.test IS NOT NULL DESC, st.branches DESC, st.failures DESC, st.test
$$;
