-- SPDX-License-Identifier: MPL-2.0
-- 20_history_flakes_rollup.sql - the function history_flakes_rollup as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0032_history_flaky_try_authors.sql.
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
