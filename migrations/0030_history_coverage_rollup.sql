-- SPDX-License-Identifier: MPL-2.0
-- 0030_history_coverage_rollup.sql - what the test history rests on (retrig report's
-- coverage: runs, pushes, branches and pull requests per window, day and project, and the
-- stretches with no run) from a rollup of the runs (issue 23). Those four reads went over
-- every run of the window in history_runs: at Firefox's volume (tens of thousands of test
-- tasks a day) they cost what the runs cost, over a second each at bench_history's 5 million
-- outcomes and ten times that at 50 million. They are now functions that read, for a window
-- of whole UTC days, two small tables kept by history_rollup_apply with the rest of the
-- rollup:
--   history_rollup_run_days   repository x day x project x branch class x source: runs,
--                             failures-only runs, first and last run, and the day's distinct
--                             pushes, branch keys and pull requests (a day has hundreds of
--                             pushes, not tens of thousands of runs), so that distinct counts
--                             over days stay exact;
--   history_rollup_run_hours  repository x UTC hour: its first and last run. A stretch with no
--                             run of at least an hour starts at the last run of one hour and
--                             ends at the first run of the next hour that has one, so the gaps
--                             the coverage reports (at least 6 hours) are exact from these.
-- Other windows, and gaps shorter than an hour, read the raw runs as before. Each function
-- takes p_rollup: NULL chooses, true or false forces one side (tests/integration/
-- test_history_rollup.c checks that both give the same rows).

CREATE TABLE history_rollup_run_days (
    repository         text        NOT NULL,
    day                date        NOT NULL,
    project            text        NOT NULL,
    branch_class       text        NOT NULL,
    source             text        NOT NULL,
    runs               bigint      NOT NULL,
    failures_only_runs bigint      NOT NULL,
    first_run          timestamptz NOT NULL,
    last_run           timestamptz NOT NULL,
    pushes             text[]      NOT NULL,
    branch_keys        text[]      NOT NULL,
    prs                integer[]   NOT NULL,
    PRIMARY KEY (repository, day, project, branch_class, source)
);
COMMENT ON TABLE history_rollup_run_days IS 'Test history runs per UTC day, project, branch class and source, with the day''s distinct pushes, branch keys and pull requests (retrig report''s coverage).';
COMMENT ON COLUMN history_rollup_run_days.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_run_days.day IS 'UTC day of the runs.';
COMMENT ON COLUMN history_rollup_run_days.project IS 'history_runs.project.';
COMMENT ON COLUMN history_rollup_run_days.branch_class IS 'main or other.';
COMMENT ON COLUMN history_rollup_run_days.source IS 'history_runs.source.';
COMMENT ON COLUMN history_rollup_run_days.runs IS 'Runs.';
COMMENT ON COLUMN history_rollup_run_days.failures_only_runs IS 'Runs that record failures only (not complete_results).';
COMMENT ON COLUMN history_rollup_run_days.first_run IS 'The first run_at of the day.';
COMMENT ON COLUMN history_rollup_run_days.last_run IS 'The last run_at of the day.';
COMMENT ON COLUMN history_rollup_run_days.pushes IS 'Distinct pushes of the runs, sorted.';
COMMENT ON COLUMN history_rollup_run_days.branch_keys IS 'Distinct branch keys of the runs, sorted.';
COMMENT ON COLUMN history_rollup_run_days.prs IS 'Distinct pull requests of the runs, sorted.';

CREATE TABLE history_rollup_run_hours (
    repository text        NOT NULL,
    hour       timestamptz NOT NULL,
    first_run  timestamptz NOT NULL,
    last_run   timestamptz NOT NULL,
    PRIMARY KEY (repository, hour)
);
COMMENT ON TABLE history_rollup_run_hours IS 'The first and last test history run of each UTC hour that has one (the coverage''s stretches without runs).';
COMMENT ON COLUMN history_rollup_run_hours.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_run_hours.hour IS 'The UTC hour.';
COMMENT ON COLUMN history_rollup_run_hours.first_run IS 'Its first run_at.';
COMMENT ON COLUMN history_rollup_run_hours.last_run IS 'Its last run_at.';

-- The run figures of the runs in rollup_runs (history_rollup_apply's chunk).
CREATE FUNCTION history_rollup_add_runs() RETURNS void
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
    INSERT INTO history_rollup_run_days AS x (repository, day, project, branch_class, source,
                                              runs, failures_only_runs, first_run, last_run,
                                              pushes, branch_keys, prs)
    SELECT r.repository, r.day, r.project, r.branch_class, r.source, count(*),
           count(*) FILTER (WHERE NOT r.complete_results), min(r.run_at), max(r.run_at),
           array_agg(DISTINCT r.push ORDER BY r.push),
           array_agg(DISTINCT r.branch_key ORDER BY r.branch_key),
           coalesce(array_agg(DISTINCT r.pr ORDER BY r.pr) FILTER (WHERE r.pr IS NOT NULL), '{}')
      FROM rollup_runs r
     GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (repository, day, project, branch_class, source) DO UPDATE
       SET runs = x.runs + EXCLUDED.runs,
           failures_only_runs = x.failures_only_runs + EXCLUDED.failures_only_runs,
           first_run = least(x.first_run, EXCLUDED.first_run),
           last_run = greatest(x.last_run, EXCLUDED.last_run),
           pushes = CASE WHEN x.pushes @> EXCLUDED.pushes THEN x.pushes
                         ELSE ARRAY(SELECT DISTINCT p FROM unnest(x.pushes || EXCLUDED.pushes) p
                                     ORDER BY p) END,
           branch_keys = CASE WHEN x.branch_keys @> EXCLUDED.branch_keys THEN x.branch_keys
                              ELSE ARRAY(SELECT DISTINCT b
                                           FROM unnest(x.branch_keys || EXCLUDED.branch_keys) b
                                          ORDER BY b) END,
           prs = CASE WHEN x.prs @> EXCLUDED.prs THEN x.prs
                      ELSE ARRAY(SELECT DISTINCT p FROM unnest(x.prs || EXCLUDED.prs) p
                                  ORDER BY p) END;
    INSERT INTO history_rollup_run_hours AS x (repository, hour, first_run, last_run)
    SELECT r.repository, date_trunc('hour', r.run_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
           min(r.run_at), max(r.run_at)
      FROM rollup_runs r
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (repository, hour) DO UPDATE
       SET first_run = least(x.first_run, EXCLUDED.first_run),
           last_run = greatest(x.last_run, EXCLUDED.last_run)
     WHERE EXCLUDED.first_run < x.first_run OR EXCLUDED.last_run > x.last_run;
END
$$;
COMMENT ON FUNCTION history_rollup_add_runs() IS
    'history_rollup_apply''s step for history_rollup_run_days and history_rollup_run_hours.';

CREATE OR REPLACE FUNCTION history_rollup_apply(p_limit integer) RETURNS integer
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
    n integer;
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
        PERFORM history_rollup_add_tests(ARRAY(
            SELECT r.id FROM rollup_redo d
              JOIN history_runs r ON r.repository = d.repository
               AND r.run_at >= d.day::timestamp AT TIME ZONE 'UTC'
               AND r.run_at < (d.day + 1)::timestamp AT TIME ZONE 'UTC'
             WHERE NOT EXISTS (SELECT 1 FROM history_rollup_queue q WHERE q.run_id = r.id AND q.added)
               AND NOT EXISTS (SELECT 1 FROM rollup_chunk c WHERE c.run_id = r.id AND c.added)));
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
    RETURN n;
END
$$;

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

-- Whether a coverage read of [p_since, p_until) can come from the rollup: whole UTC days.
CREATE FUNCTION history_coverage_whole_days(p_since timestamptz, p_until timestamptz)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
SELECT isfinite(p_since) AND isfinite(p_until) AND p_since < p_until
       AND date_trunc('day', p_since AT TIME ZONE 'UTC') = p_since AT TIME ZONE 'UTC'
       AND date_trunc('day', p_until AT TIME ZONE 'UTC') = p_until AT TIME ZONE 'UTC'
$$;
COMMENT ON FUNCTION history_coverage_whole_days(timestamptz, timestamptz) IS
    'True when since and until are UTC midnights (the coverage reads the rollup then).';

-- The rollup's rows of a window of whole days (those retention kept).
CREATE FUNCTION history_coverage_days_of(p_repository text, p_since timestamptz,
                                         p_until timestamptz)
RETURNS SETOF history_rollup_run_days LANGUAGE sql STABLE AS $$
SELECT x.*
  FROM history_rollup_run_days x, history_rollup_horizon h
 WHERE x.repository = p_repository
   AND x.day >= greatest((p_since AT TIME ZONE 'UTC')::date, h.first_day)
   AND x.day < (p_until AT TIME ZONE 'UTC')::date
$$;
COMMENT ON FUNCTION history_coverage_days_of(text, timestamptz, timestamptz) IS
    'history_rollup_run_days of a repository in [since, until), UTC midnights, from the first day retention kept.';

CREATE FUNCTION history_coverage_totals(p_repository text, p_since timestamptz,
                                        p_until timestamptz, p_rollup boolean DEFAULT NULL)
RETURNS TABLE (runs bigint, main_runs bigint, pushes bigint, main_pushes bigint,
               other_branches bigint, prs bigint, failures_only_runs bigint,
               first_run timestamptz, last_run timestamptz)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF coalesce(p_rollup, history_coverage_whole_days(p_since, p_until)) THEN
        RETURN QUERY
        WITH d AS MATERIALIZED (SELECT * FROM history_coverage_days_of(p_repository, p_since, p_until))
        SELECT coalesce(sum(d.runs), 0)::bigint,
               coalesce(sum(d.runs) FILTER (WHERE d.branch_class = 'main'), 0)::bigint,
               (SELECT count(*) FROM (SELECT DISTINCT y.project, p
                                        FROM d y, unnest(y.pushes) p) z),
               (SELECT count(*) FROM (SELECT DISTINCT y.project, p
                                        FROM d y, unnest(y.pushes) p
                                       WHERE y.branch_class = 'main') z),
               (SELECT count(DISTINCT b) FROM d y, unnest(y.branch_keys) b
                 WHERE y.branch_class <> 'main'),
               (SELECT count(DISTINCT p) FROM d y, unnest(y.prs) p),
               coalesce(sum(d.failures_only_runs), 0)::bigint, min(d.first_run), max(d.last_run)
          FROM d;
    ELSE
        RETURN QUERY
        SELECT count(*), count(*) FILTER (WHERE r.branch_class = 'main'),
               count(DISTINCT (r.project, r.push)),
               count(DISTINCT (r.project, r.push)) FILTER (WHERE r.branch_class = 'main'),
               count(DISTINCT r.branch_key) FILTER (WHERE r.branch_class <> 'main'),
               count(DISTINCT r.pr), count(*) FILTER (WHERE NOT r.complete_results),
               min(r.run_at), max(r.run_at)
          FROM history_runs r
         WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until;
    END IF;
END
$$;
COMMENT ON FUNCTION history_coverage_totals(text, timestamptz, timestamptz, boolean) IS
    'Runs, main runs, distinct pushes (all, main), branches of class other, pull requests, failures-only runs, first and last run of a repository in [since, until): from the rollup for whole UTC days (p_rollup NULL), else from history_runs; p_rollup true or false forces one.';

CREATE FUNCTION history_coverage_days(p_repository text, p_since timestamptz,
                                      p_until timestamptz, p_rollup boolean DEFAULT NULL)
RETURNS TABLE (day date, runs bigint, main_runs bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF coalesce(p_rollup, history_coverage_whole_days(p_since, p_until)) THEN
        RETURN QUERY
        SELECT d.day, sum(d.runs)::bigint,
               coalesce(sum(d.runs) FILTER (WHERE d.branch_class = 'main'), 0)::bigint
          FROM history_coverage_days_of(p_repository, p_since, p_until) d
         GROUP BY d.day ORDER BY d.day;
    ELSE
        RETURN QUERY
        SELECT (r.run_at AT TIME ZONE 'UTC')::date, count(*),
               count(*) FILTER (WHERE r.branch_class = 'main')
          FROM history_runs r
         WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until
         GROUP BY 1 ORDER BY 1;
    END IF;
END
$$;
COMMENT ON FUNCTION history_coverage_days(text, timestamptz, timestamptz, boolean) IS
    'Runs and main runs of a repository per UTC day of [since, until), days with runs only; rollup or raw as history_coverage_totals.';

CREATE FUNCTION history_coverage_projects(p_repository text, p_since timestamptz,
                                          p_until timestamptz, p_limit integer,
                                          p_rollup boolean DEFAULT NULL)
RETURNS TABLE (project text, branch_class text, source text, runs bigint, pushes bigint,
               last_run timestamptz, branches bigint, prs bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF coalesce(p_rollup, history_coverage_whole_days(p_since, p_until)) THEN
        RETURN QUERY
        WITH d AS MATERIALIZED (SELECT * FROM history_coverage_days_of(p_repository, p_since, p_until)),
        s AS (SELECT d.project, d.branch_class, d.source, sum(d.runs)::bigint AS runs,
                     max(d.last_run) AS last_run
                FROM d GROUP BY 1, 2, 3)
        SELECT s.project, s.branch_class, s.source, s.runs,
               (SELECT count(DISTINCT p) FROM d y, unnest(y.pushes) p
                 WHERE y.project = s.project AND y.branch_class = s.branch_class
                   AND y.source = s.source),
               s.last_run,
               (SELECT count(DISTINCT b) FROM d y, unnest(y.branch_keys) b
                 WHERE y.project = s.project AND y.branch_class = s.branch_class
                   AND y.source = s.source),
               (SELECT count(DISTINCT p) FROM d y, unnest(y.prs) p
                 WHERE y.project = s.project AND y.branch_class = s.branch_class
                   AND y.source = s.source)
          FROM s
         ORDER BY s.runs DESC, s.project, s.branch_class, s.source LIMIT p_limit;
    ELSE
        RETURN QUERY
        SELECT r.project, r.branch_class, r.source, count(*), count(DISTINCT r.push),
               max(r.run_at), count(DISTINCT r.branch_key), count(DISTINCT r.pr)
          FROM history_runs r
         WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until
         GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2, 3 LIMIT p_limit;
    END IF;
END
$$;
COMMENT ON FUNCTION history_coverage_projects(text, timestamptz, timestamptz, integer, boolean) IS
    'Per project, branch class and source of a repository in [since, until): runs, distinct pushes, last run, distinct branch keys and pull requests; the most runs first, at most p_limit rows; rollup or raw as history_coverage_totals.';

CREATE FUNCTION history_coverage_gaps(p_repository text, p_since timestamptz,
                                      p_until timestamptz, p_seconds integer, p_limit integer,
                                      p_rollup boolean DEFAULT NULL)
RETURNS TABLE (gap_from timestamptz, gap_to timestamptz, seconds bigint, at_start boolean,
               at_end boolean)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF coalesce(p_rollup, history_coverage_whole_days(p_since, p_until) AND p_seconds >= 3600) THEN
        -- an hour's runs are less than an hour apart: only the stretches between two hours
        -- with runs (or the window's ends) can be long enough
        RETURN QUERY
        WITH t AS (SELECT x.first_run AS a, x.last_run AS b
                     FROM history_rollup_run_hours x, history_rollup_horizon h
                    WHERE x.repository = p_repository AND x.hour >= p_since AND x.hour < p_until
                      AND x.hour >= h.first_day::timestamp AT TIME ZONE 'UTC'
                   UNION ALL SELECT p_since, p_since UNION ALL SELECT p_until, p_until),
        g AS (SELECT lag(t.b) OVER (ORDER BY t.a, t.b) AS a, t.a AS b FROM t)
        SELECT g.a, g.b, extract(epoch FROM g.b - g.a)::bigint, g.a = p_since, g.b = p_until
          FROM g WHERE g.b - g.a >= make_interval(secs => p_seconds) ORDER BY g.a LIMIT p_limit;
    ELSE
        RETURN QUERY
        WITH t AS (SELECT r.run_at FROM history_runs r
                    WHERE r.repository = p_repository AND r.run_at >= p_since
                      AND r.run_at < p_until
                   UNION ALL SELECT p_since UNION ALL SELECT p_until),
        g AS (SELECT lag(t.run_at) OVER (ORDER BY t.run_at) AS a, t.run_at AS b FROM t)
        SELECT g.a, g.b, extract(epoch FROM g.b - g.a)::bigint, g.a = p_since, g.b = p_until
          FROM g WHERE g.b - g.a >= make_interval(secs => p_seconds) ORDER BY g.a LIMIT p_limit;
    END IF;
END
$$;
COMMENT ON FUNCTION history_coverage_gaps(text, timestamptz, timestamptz, integer, integer, boolean) IS
    'Stretches of at least p_seconds with no run of a repository in [since, until), the window''s ends counting as runs; the first p_limit by start. From the hourly rollup for whole UTC days and at least an hour (p_rollup NULL), else from history_runs.';

-- The runs already counted by the rest of the rollup (those still queued are added by the
-- next history_rollup_apply calls), through the same step, from a chunk of them all.
CREATE TEMP TABLE rollup_runs AS
SELECT r.run_at, (r.run_at AT TIME ZONE 'UTC')::date AS day, r.repository, r.branch_class,
       r.branch_key, r.push, r.pr, r.complete_results, r.project, r.source
  FROM history_runs r
 WHERE NOT EXISTS (SELECT 1 FROM history_rollup_queue q WHERE q.run_id = r.id AND q.added);
SELECT history_rollup_add_runs();
DROP TABLE rollup_runs;
