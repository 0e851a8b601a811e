-- SPDX-License-Identifier: MPL-2.0
-- 0032_history_flaky_try_authors.sql - the flaky rule's breadth on try (issue 30, item 8).
-- Two ways a test looked flaky without being so:
--   one developer's try pushes: each try push was its own branch ("try:<push>"), so four
--            try pushes of one broken patch were four branches. retrig-history now keys a
--            try push by its author, the task's metadata.owner (for Gecko's tasks the push's
--            author): "try:author:<email>" (common/core/history.h, rt_history_branch_key);
--            a try run whose author is unknown keeps "try:<push>". Runs recorded before this
--            migration keep their keys (their author was not recorded).
--   a regression that landed: failures on main were never breadth (0014), but the try
--            pushes based on the broken main each failed the test on a branch of their own.
--            Now a failure under review on UTC day D is breadth only when main was not broken
--            by the test on D or on the day before: broken means that the test failed in
--            more than half of its runs on the main branches that day (runs counted as the
--            report's charts count them: history_run_marks on the raw rows,
--            history_tests_days on the rollup). An intermittent failure on main (a flaky
--            test fails in a few of its runs) leaves its try failures counted; a regression
--            fails in nearly all of them, from its landing until it is backed out or fixed.
--            Every day is decided on its own and the day before's main runs, read even when
--            they lie before the window. A try push on the evening of the landing day still
--            counts (main's runs of that day were mostly passes); from the next day on, none.
-- history_flakes_raw and history_flakes_rollup apply both rules the same way (whole days:
-- tests/integration/test_history_rollup.c compares them); the flaky flag and the branches
-- column count the same failures. Same arguments and columns as before.

COMMENT ON COLUMN history_runs.branch_key IS
    'What counts as one branch when asking how widely a test fails: the project for Taskcluster, except try and try-* where it is the push''s author ("try:author:<email>", the task''s metadata.owner, lower-cased; "try:<push>" when unknown, and for runs recorded before migration 0032), "pr:<N>" for a pull request, else the branch.';

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

CREATE OR REPLACE FUNCTION history_flakes_rollup(p_repository text, p_since timestamptz, p_until timestamptz,
                                      p_main_only boolean, p_min_branches integer,
                                      p_flaky_window interval)
RETURNS TABLE (test text, group_name text, runs bigint, failures bigint,
               failure_rate double precision, pushes bigint, pushes_failed bigint,
               push_failure_chance double precision, branches bigint, prs bigint,
               first_failure_at timestamptz, first_failure_project text,
               first_failure_branch text, first_failure_push text,
               first_failure_revision text, first_failure_signature text, flaky boolean)
LANGUAGE sql STABLE SET jit = off AS $$
WITH horizon AS (
    -- days before it are gone from the raw rows (retention); their rollup rows are not read
    SELECT h.first_day FROM history_rollup_horizon h LIMIT 1
), bounds AS (
    SELECT greatest((p_since AT TIME ZONE 'UTC')::date, h.first_day) AS d1,
           (p_until AT TIME ZONE 'UTC')::date AS d2,
           greatest(((p_since - p_flaky_window) AT TIME ZONE 'UTC')::date, h.first_day) AS d0,
           greatest((p_since AT TIME ZONE 'UTC')::date, h.first_day) AS d1_pushes,
           h.first_day AS horizon,
           CASE WHEN p_main_only THEN ARRAY['main'] ELSE ARRAY['main', 'other'] END AS classes,
           CASE WHEN p_main_only THEN 'main' ELSE 'all' END AS scope
      FROM horizon h
), listed AS (
    SELECT DISTINCT t.test
      FROM bounds b JOIN history_rollup_tests t
        ON t.repository = p_repository AND t.day >= b.d1 AND t.day < b.d2 AND t.failures > 0
), window_rows AS (
    -- the recorded rows in scope, in one pass (0029 looked each listed test up four times)
    SELECT t.test, sum(t.runs)::bigint AS runs, sum(t.failures)::bigint AS failures,
           min(t.group_min) AS group_name, history_array_cat_agg(t.failed_pushes) AS failed,
           history_array_cat_agg(t.prs) AS prs, history_array_cat_agg(t.stray_pushes) AS stray
      FROM bounds b
      JOIN history_rollup_tests t ON t.repository = p_repository AND t.day >= b.d1
                                 AND t.day < b.d2 AND t.branch_class = ANY (b.classes)
     WHERE t.test IN (SELECT l.test FROM listed l)
     GROUP BY t.test
), recorded AS (
    -- every listed test, with or without rows in scope; the distinct pushes and pull requests
    -- of its rows
    SELECT l.test, w.runs, w.failures, w.group_name,
           coalesce((SELECT count(DISTINCT p) FROM unnest(w.failed) p), 0) AS pushes_failed,
           coalesce((SELECT count(DISTINCT p) FROM unnest(w.prs) p), 0) AS prs,
           coalesce((SELECT array_agg(DISTINCT p) FROM unnest(w.stray) p), '{}') AS stray
      FROM listed l LEFT JOIN window_rows w ON w.test = l.test
), known AS (
    -- the groups each listed test is known in (a row in it on any day), with the runs of the
    -- window where the test had its own row in that group (overlap): one pass
    SELECT x.test, x.group_name,
           coalesce(sum(x.overlap) FILTER (WHERE x.day >= b.d1 AND x.day < b.d2
                                             AND x.branch_class = ANY (b.classes)), 0)::bigint
               AS overlap
      FROM listed l CROSS JOIN bounds b
      JOIN history_rollup_test_groups x
        ON x.repository = p_repository AND x.test = l.test AND x.day >= b.horizon
     GROUP BY x.test, x.group_name
    HAVING sum(x.own_rows) > 0
), known_groups AS (
    SELECT DISTINCT k.group_name FROM known k
), group_runs AS (
    SELECT g.group_name, sum(g.runs)::bigint AS runs
      FROM known_groups k CROSS JOIN bounds b
      JOIN history_rollup_groups g ON g.repository = p_repository AND g.group_name = k.group_name
     WHERE g.day >= b.d1 AND g.day < b.d2 AND g.branch_class = ANY (b.classes)
     GROUP BY g.group_name
), group_pushes AS (
    -- distinct pushes of each group in the window: the pushes of each day that had not run it
    -- since before the window
    SELECT x.group_name, sum(x.pushes)::bigint AS pushes
      FROM known_groups k CROSS JOIN bounds b
      JOIN history_rollup_group_pushes x ON x.repository = p_repository AND x.group_name = k.group_name
     WHERE x.day >= b.d1 AND x.day < b.d2 AND x.scope = b.scope AND x.prev_day < b.d1
     GROUP BY x.group_name
), derived AS (
    SELECT k.test, sum(gr.runs - k.overlap)::bigint AS runs,
           min(k.group_name) FILTER (WHERE gr.runs > k.overlap) AS group_name
      FROM known k
      JOIN group_runs gr ON gr.group_name = k.group_name
     GROUP BY k.test
), known_count AS (
    SELECT k.test, count(*) AS n, min(k.group_name) AS group_name FROM known k GROUP BY k.test
), pushes AS MATERIALIZED (
    -- (materialized: inlined, its estimates led the planner to compare every listed test with
    -- every row of it)
    -- the pushes of the recorded rows and of the runs of the known groups: a recorded row in a
    -- run of its own group is a push of that group; the other rows' pushes are "stray"
    SELECT rc.test,
           CASE WHEN coalesce(kc.n, 0) = 0 THEN cardinality(rc.stray)::bigint
                WHEN kc.n = 1 THEN coalesce(gp.pushes, 0) + (
                    SELECT count(*) FROM unnest(rc.stray) s(push)
                     WHERE NOT EXISTS (
                        SELECT 1 FROM history_rollup_pushes hp
                          JOIN history_rollup_push_groups x
                            ON x.repository = hp.repository AND x.push = hp.push
                           AND x.first_day = hp.first_day AND x.group_name = kc.group_name
                         WHERE hp.repository = p_repository AND hp.push = s.push
                           AND EXISTS (SELECT 1 FROM unnest(CASE WHEN p_main_only THEN x.main_days
                                                                 ELSE x.days END) d
                                        WHERE d >= b.d1_pushes AND d < b.d2)))
                ELSE (SELECT count(DISTINCT u.push)
                        FROM (SELECT x.push
                                FROM known k2
                                JOIN history_rollup_push_groups x
                                  ON x.repository = p_repository AND x.group_name = k2.group_name
                               WHERE k2.test = rc.test
                                 AND EXISTS (SELECT 1 FROM unnest(CASE WHEN p_main_only
                                                                       THEN x.main_days
                                                                       ELSE x.days END) d
                                              WHERE d >= b.d1_pushes AND d < b.d2)
                              UNION ALL
                              SELECT s.push FROM unnest(rc.stray) s(push)) u)
           END AS pushes
      FROM recorded rc CROSS JOIN bounds b
      LEFT JOIN known_count kc ON kc.test = rc.test
      LEFT JOIN group_pushes gp ON gp.group_name = kc.group_name
), failing AS (
    -- failures on branches under review, per test, day and branch (of every test: the rows of
    -- tests not listed are dropped by the joins at the end)
    SELECT x.test, x.day, x.branch_key, x.first_at, x.last_at
      FROM bounds b
      JOIN history_rollup_test_branches x ON x.repository = p_repository
                                         AND x.day >= b.d0 AND x.day < b.d2
), main_broken AS (
    -- the UTC days on which a test failed in more than half of its runs on the main branches
    -- (history_tests_days: the counting of history_run_marks, from the rollup)
    SELECT d.test, d.day
      FROM bounds b
     CROSS JOIN LATERAL history_tests_days(p_repository, ARRAY(
                SELECT DISTINCT f.test FROM failing f
                 WHERE f.test IN (SELECT t.test FROM history_rollup_tests t
                                   WHERE t.repository = p_repository AND t.day >= b.d0 - 1
                                     AND t.day < b.d2 AND t.branch_class = 'main'
                                     AND t.failures > 0)),
                b.d0 - 1, b.d2) d
     WHERE d.branch_class = 'main' AND d.failures * 2 > d.runs
), counted AS (
    -- the days of failures under review that are breadth: not a day when, or after a day
    -- when, main was broken by the test (try pushes based on a regression that landed)
    SELECT f.* FROM failing f
     WHERE NOT EXISTS (SELECT 1 FROM main_broken m
                        WHERE m.test = f.test AND m.day IN (f.day, f.day - 1))
), breadth AS (
    SELECT f.test, count(DISTINCT f.branch_key) AS n
      FROM counted f CROSS JOIN bounds b WHERE f.day >= b.d1 GROUP BY f.test
), crowded AS (
    -- more than min_branches branches failing on one day of the window: at the last of their
    -- first failures that day, all of them are within the flaky window
    SELECT DISTINCT f.test
      FROM counted f CROSS JOIN bounds b
     WHERE f.day >= b.d1
     GROUP BY f.test, f.day
    HAVING count(*) > p_min_branches
), sparse AS (
    -- the other tests' failures, for the sweep
    SELECT f.* FROM counted f WHERE NOT EXISTS (SELECT 1 FROM crowded c WHERE c.test = f.test)
), spans AS (
    -- each branch's failures of a test as spans [first failure, last failure + flaky window)
    -- per day, each cut where the branch's next day of failures starts: the same union, in
    -- spans that do not overlap
    SELECT f.test, f.first_at AS span_from,
           least(f.last_at + p_flaky_window,
                 lead(f.first_at, 1, 'infinity') OVER (PARTITION BY f.test, f.branch_key
                                                       ORDER BY f.day)) AS span_until
      FROM sparse f
), swept AS (
    -- the branches whose span holds each first failure of a day in the window: a sweep over
    -- the spans' ends (first, as a span ends before its end), starts, then the failures
    SELECT e.test, e.kind,
           sum(e.delta) OVER (PARTITION BY e.test ORDER BY e.at, e.kind ROWS UNBOUNDED PRECEDING)
               AS branches
      FROM (SELECT sp.test, sp.span_until AS at, 0 AS kind, -1 AS delta FROM spans sp
            UNION ALL
            SELECT sp.test, sp.span_from, 1, 1 FROM spans sp
            UNION ALL
            SELECT f.test, f.first_at, 2, 0 FROM sparse f CROSS JOIN bounds b
             WHERE f.day >= b.d1) e
), flaky AS (
    -- more than min_branches branches at one of them (see the heads of 0020 and 0029)
    SELECT c.test FROM crowded c
    UNION
    SELECT w.test FROM swept w WHERE w.kind = 2 AND w.branches > p_min_branches
), stats AS (
    SELECT l.test, least(rc.group_name, ds.group_name) AS group_name,
           coalesce(rc.runs, 0) + coalesce(ds.runs, 0) AS runs,
           coalesce(rc.failures, 0) AS failures, coalesce(ps.pushes, 0) AS pushes,
           coalesce(rc.pushes_failed, 0) AS pushes_failed,
           CASE WHEN p_main_only THEN 0 ELSE coalesce(br.n, 0) END AS branches,
           coalesce(rc.prs, 0) AS prs
      FROM listed l
      LEFT JOIN recorded rc ON rc.test = l.test
      LEFT JOIN derived ds ON ds.test = l.test
      LEFT JOIN pushes ps ON ps.test = l.test
      LEFT JOIN breadth br ON br.test = l.test
     WHERE coalesce(rc.runs, 0) + coalesce(ds.runs, 0) > 0
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
        -- the test's first failure, whatever its signature, on any branch at any time: the
        -- earliest of the days' first failures
        SELECT x.first_failure_at AS run_at, x.first_failure->>'project' AS project,
               x.first_failure->>'branch' AS branch, x.first_failure->>'push' AS push,
               x.first_failure->>'revision' AS revision, x.first_failure->>'signature' AS signature
          FROM history_rollup_tests x
         WHERE x.repository = p_repository AND x.test = st.test AND x.first_failure_at IS NOT NULL
           AND x.day >= (SELECT h.first_day FROM history_rollup_horizon h LIMIT 1)
         ORDER BY x.first_failure_at, x.first_failure_run
         LIMIT 1) ff
    ON true
 WHERE st.failures > 0 OR fl.test IS NOT NULL
 ORDER BY fl.test IS NOT NULL DESC, st.branches DESC, st.failures DESC, st.test
$$;

COMMENT ON FUNCTION history_flakes_rollup(text, timestamptz, timestamptz, boolean, integer, interval) IS
    'history_flakes from the per-day rollup (history_rollup_*): since and until at UTC midnight, a flaky window of at least a day. The same rows as history_flakes_raw over the runs the rollup holds; the flaky rule by a sweep over each branch''s spans of failures (0029), leaving out the days of failures on or after a day when main was broken by the test (0032); each test''s recorded rows read in one pass (0031).';
COMMENT ON FUNCTION history_flakes(text, timestamptz, timestamptz, boolean, integer, interval) IS
    'Per test of a repository in [since, until): runs, failures, failure rate, breadth (pushes, branches under review, pull requests), the first failure (any signature, any time), and the flaky flag (failed on more than min_branches branches of class other within flaky_window, a try push''s author being one branch, failures on or after a day when main was broken by the test left out: migration 0032). From the per-day rollup for whole UTC days (history_flakes_rollup), else from the raw rows (history_flakes_raw). Used by retrig flakes and retrig report.';
