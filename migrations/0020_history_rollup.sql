-- SPDX-License-Identifier: MPL-2.0
-- 0020_history_rollup.sql - a per-day rollup of the test history, so that the dashboard and
-- `retrig flakes` cost what the number of tests, groups and days costs, not the raw rows
-- (issue 23). history_flakes keeps 0014's arguments, columns and answers: for a window of
-- whole UTC days (since and until at midnight, as `retrig flakes` and `retrig report` ask)
-- and a flaky window of at least a day it reads the rollup; for any other window it runs
-- 0014's body on the raw rows (history_flakes_raw). tests/integration/test_history_rollup.c
-- checks that both give the same rows on generated data.
--
-- The rollup is kept by history_rollup_apply(), which retrig-history calls after each batch
-- it writes and between messages: a trigger queues every new run (history_rollup_queue),
-- and the function adds a chunk of queued runs to the rollup in one transaction, so a run
-- is counted exactly once. The rollup is therefore behind the raw rows by the runs still
-- queued (a batch or two). A run merged again (JUnit re-ingest) is queued with redo: its
-- day's per-test rows are counted again from the raw rows.
--
-- What each figure of history_flakes (0014) needs, and where it is kept, per repository:
--   history_rollup_groups        group x day x branch class: runs of the group in runs that
--                                record failures only (the runs a test's passes derive from)
--   history_rollup_tests         test x day x branch class: recorded rows, failures, least
--                                group, failing pushes, pull requests, the pushes of rows
--                                that no group run of the same run covers ("stray"), and the
--                                day's first failure (run_at, run id)
--   history_rollup_test_groups   test x group x day x branch class: the test's rows in the
--                                group (own_rows > 0 on any day: the test is known in it) and
--                                its rows in runs that ran the group (overlap)
--   history_rollup_test_branches test x day x branch key, branch class other only: the
--                                first and last failure of that day (the flaky rule)
--   history_rollup_group_pushes  group x day x scope (all, main) x previous day: how many
--                                pushes ran the group that day and, before that day, last
--                                on prev_day ('-infinity': never). The distinct pushes of
--                                days [d1, d2) are the rows of those days with prev_day < d1,
--                                exactly, whatever the span of a push.
--   history_rollup_push_groups   push x group: the days it ran (all classes, main only), to
--                                keep the above; partitioned by the day the push was first
--                                seen (history_rollup_pushes), dropped a week after the
--                                outcomes of that day (a push first seen then may have run on
--                                a day kept; days the rollup no longer counts are not read).
-- Why the flaky rule is exact from first/last failure per branch and day: with a flaky
-- window W >= 1 day, a failure at t on day d counts branch b if b failed on a day strictly
-- between day(t - W) and d, or on day d at or before t (b's first failure that day <= t),
-- or on day(t - W) after t - W (b's last failure that day > t - W); and the largest count
-- over the failures of day d is reached at some branch's first failure of that day (between
-- two such moments the count can only fall), so those are the only moments to look at.

-- The first day the rollup answers for: the first day retention kept (history_maintain sets
-- it when it drops days; the rollup's rows of earlier days are then removed by
-- history_rollup_prune, at leisure, and never read).
CREATE TABLE history_rollup_horizon (
    first_day date NOT NULL
);
INSERT INTO history_rollup_horizon VALUES ('-infinity');
COMMENT ON TABLE history_rollup_horizon IS
    'One row: the first UTC day the rollup answers for (-infinity until retention first drops a day).';
COMMENT ON COLUMN history_rollup_horizon.first_day IS 'The first day retention kept.';

-- Runs written but not yet in the rollup.
CREATE TABLE history_rollup_queue (
    run_id bigint      PRIMARY KEY,
    run_at timestamptz NOT NULL,
    added  boolean     NOT NULL DEFAULT false,
    redo   boolean     NOT NULL DEFAULT false
);
COMMENT ON TABLE history_rollup_queue IS
    'Test history runs not yet counted in the rollup: queued by a trigger on history_runs (added) or by a merge into a stored run (redo), taken by history_rollup_apply().';
COMMENT ON COLUMN history_rollup_queue.run_id IS 'The run (history_runs.id).';
COMMENT ON COLUMN history_rollup_queue.run_at IS 'Its run_at (the partition key, to find it).';
COMMENT ON COLUMN history_rollup_queue.added IS 'A new run, not counted yet.';
COMMENT ON COLUMN history_rollup_queue.redo IS 'Rows were merged into the run: its day''s per-test rollup is counted again from the raw rows.';

CREATE FUNCTION history_rollup_enqueue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO history_rollup_queue (run_id, run_at, added)
    SELECT n.id, n.run_at, true FROM new_runs n
    ON CONFLICT (run_id) DO UPDATE SET added = true;
    RETURN NULL;
END
$$;
CREATE TRIGGER history_runs_rollup_enqueue AFTER INSERT ON history_runs
    REFERENCING NEW TABLE AS new_runs FOR EACH STATEMENT EXECUTE FUNCTION history_rollup_enqueue();

CREATE TABLE history_rollup_groups (
    repository   text   NOT NULL,
    group_name   text   NOT NULL,
    day          date   NOT NULL,
    branch_class text   NOT NULL,
    runs         bigint NOT NULL,
    PRIMARY KEY (repository, group_name, day, branch_class)
);
COMMENT ON TABLE history_rollup_groups IS 'Runs of each test group per UTC day and branch class, in runs that record failures only (errorsummary).';
COMMENT ON COLUMN history_rollup_groups.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_groups.group_name IS 'The group (manifest).';
COMMENT ON COLUMN history_rollup_groups.day IS 'UTC day of the runs.';
COMMENT ON COLUMN history_rollup_groups.branch_class IS 'main or other.';
COMMENT ON COLUMN history_rollup_groups.runs IS 'Runs of the group (history_groups rows of failures-only runs).';

CREATE TABLE history_rollup_tests (
    repository        text        NOT NULL,
    test              text        NOT NULL,
    day               date        NOT NULL,
    branch_class      text        NOT NULL,
    runs              bigint      NOT NULL,
    failures          bigint      NOT NULL,
    group_min         text        NOT NULL,
    stray_pushes      text[]      NOT NULL,
    failed_pushes     text[]      NOT NULL,
    prs               integer[]   NOT NULL,
    first_failure_at  timestamptz,
    first_failure_run bigint,
    first_failure     jsonb,
    PRIMARY KEY (repository, test, day, branch_class)
);
CREATE INDEX history_rollup_tests_day_idx ON history_rollup_tests (repository, day) WHERE failures > 0;
COMMENT ON TABLE history_rollup_tests IS 'Recorded rows of each test per UTC day and branch class (history_tests).';
COMMENT ON COLUMN history_rollup_tests.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_tests.test IS 'The test.';
COMMENT ON COLUMN history_rollup_tests.day IS 'UTC day of the runs.';
COMMENT ON COLUMN history_rollup_tests.branch_class IS 'main or other.';
COMMENT ON COLUMN history_rollup_tests.runs IS 'Recorded rows (failures, and every result of complete runs).';
COMMENT ON COLUMN history_rollup_tests.failures IS 'Recorded failures.';
COMMENT ON COLUMN history_rollup_tests.group_min IS 'The least group_name of the recorded rows.';
COMMENT ON COLUMN history_rollup_tests.stray_pushes IS 'Distinct pushes of recorded rows no run of their own group in the same run covers: complete runs, harness failures (group ""), a group without a result.';
COMMENT ON COLUMN history_rollup_tests.failed_pushes IS 'Distinct pushes of the failures.';
COMMENT ON COLUMN history_rollup_tests.prs IS 'Distinct pull requests of the failures.';
COMMENT ON COLUMN history_rollup_tests.first_failure_at IS 'The day''s first failure: its run_at.';
COMMENT ON COLUMN history_rollup_tests.first_failure_run IS 'The day''s first failure: its run (least id at that run_at).';
COMMENT ON COLUMN history_rollup_tests.first_failure IS 'The day''s first failure: {"project", "branch", "push", "revision", "signature"}.';

CREATE TABLE history_rollup_test_groups (
    repository   text   NOT NULL,
    test         text   NOT NULL,
    group_name   text   NOT NULL,
    day          date   NOT NULL,
    branch_class text   NOT NULL,
    own_rows     bigint NOT NULL DEFAULT 0,
    overlap      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (repository, test, group_name, day, branch_class)
);
COMMENT ON TABLE history_rollup_test_groups IS 'A test and a group it is known in, per UTC day and branch class, for runs that record failures only.';
COMMENT ON COLUMN history_rollup_test_groups.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_test_groups.test IS 'The test.';
COMMENT ON COLUMN history_rollup_test_groups.group_name IS 'A group the test has a row in (on some day: the test is known in the group).';
COMMENT ON COLUMN history_rollup_test_groups.day IS 'UTC day of the runs.';
COMMENT ON COLUMN history_rollup_test_groups.branch_class IS 'main or other.';
COMMENT ON COLUMN history_rollup_test_groups.own_rows IS 'The test''s rows with this group.';
COMMENT ON COLUMN history_rollup_test_groups.overlap IS 'The test''s rows in runs that ran this group (its runs of the group are not derived passes).';

CREATE TABLE history_rollup_test_branches (
    repository text        NOT NULL,
    test       text        NOT NULL,
    day        date        NOT NULL,
    branch_key text        NOT NULL,
    first_at   timestamptz NOT NULL,
    last_at    timestamptz NOT NULL,
    PRIMARY KEY (repository, test, day, branch_key)
);
COMMENT ON TABLE history_rollup_test_branches IS 'Failures of each test per UTC day on each branch of class other (the flaky rule''s breadth).';
COMMENT ON COLUMN history_rollup_test_branches.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_test_branches.test IS 'The test.';
COMMENT ON COLUMN history_rollup_test_branches.day IS 'UTC day of the failures.';
COMMENT ON COLUMN history_rollup_test_branches.branch_key IS 'The branch (history_runs.branch_key).';
COMMENT ON COLUMN history_rollup_test_branches.first_at IS 'The first failure of the day on the branch.';
COMMENT ON COLUMN history_rollup_test_branches.last_at IS 'The last failure of the day on the branch.';

CREATE TABLE history_rollup_group_pushes (
    repository text   NOT NULL,
    group_name text   NOT NULL,
    day        date   NOT NULL,
    scope      text   NOT NULL CHECK (scope IN ('all', 'main')),
    prev_day   date   NOT NULL,
    pushes     bigint NOT NULL,
    PRIMARY KEY (repository, group_name, day, scope, prev_day)
);
CREATE INDEX history_rollup_group_pushes_prev_idx ON history_rollup_group_pushes (prev_day)
    WHERE prev_day > '-infinity';
COMMENT ON TABLE history_rollup_group_pushes IS 'Pushes that ran a group (failures-only runs) per UTC day, by the day they last ran it before: distinct pushes over days [d1, d2) = sum of the rows of those days with prev_day < d1.';
COMMENT ON COLUMN history_rollup_group_pushes.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_group_pushes.group_name IS 'The group.';
COMMENT ON COLUMN history_rollup_group_pushes.day IS 'UTC day.';
COMMENT ON COLUMN history_rollup_group_pushes.scope IS 'all (every branch class) or main (main runs only).';
COMMENT ON COLUMN history_rollup_group_pushes.prev_day IS 'The day before this one on which those pushes last ran the group, -infinity for none.';
COMMENT ON COLUMN history_rollup_group_pushes.pushes IS 'How many pushes.';

CREATE TABLE history_rollup_pushes (
    repository text NOT NULL,
    push       text NOT NULL,
    first_day  date NOT NULL,
    min_day    date NOT NULL,
    last_day   date NOT NULL,
    PRIMARY KEY (repository, push)
);
CREATE INDEX history_rollup_pushes_min_day_idx ON history_rollup_pushes (min_day);
COMMENT ON TABLE history_rollup_pushes IS 'Each push of the rollup and the day it was first seen (the partition of its history_rollup_push_groups rows).';
COMMENT ON COLUMN history_rollup_pushes.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_pushes.push IS 'history_runs.push.';
COMMENT ON COLUMN history_rollup_pushes.first_day IS 'UTC day of its first run seen by the rollup (moved to the first day kept when retention drops it and the push ran later).';
COMMENT ON COLUMN history_rollup_pushes.min_day IS 'UTC day of its earliest run (a run may arrive after later ones).';
COMMENT ON COLUMN history_rollup_pushes.last_day IS 'UTC day of its last run.';

CREATE TABLE history_rollup_push_groups (
    repository text   NOT NULL,
    first_day  date   NOT NULL,
    push       text   NOT NULL,
    group_name text   NOT NULL,
    days       date[] NOT NULL,
    main_days  date[] NOT NULL,
    PRIMARY KEY (repository, push, group_name, first_day)
) PARTITION BY RANGE (first_day);
CREATE INDEX history_rollup_push_groups_group_idx ON history_rollup_push_groups (repository, group_name);
COMMENT ON TABLE history_rollup_push_groups IS 'The days on which a push ran a group (failures-only runs): keeps history_rollup_group_pushes; partitioned by the push''s first day.';
COMMENT ON COLUMN history_rollup_push_groups.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_push_groups.first_day IS 'history_rollup_pushes.first_day of the push (the partition key).';
COMMENT ON COLUMN history_rollup_push_groups.push IS 'The push.';
COMMENT ON COLUMN history_rollup_push_groups.group_name IS 'The group.';
COMMENT ON COLUMN history_rollup_push_groups.days IS 'UTC days it ran the group, any branch class, ascending.';
COMMENT ON COLUMN history_rollup_push_groups.main_days IS 'The same for runs of branch class main.';

DO $$
BEGIN
    PERFORM partman.create_parent('public.history_rollup_push_groups', 'first_day', 'native',
                                  'daily', p_premake := 7,
                                  p_start_partition := (SELECT min(p.partition_day)::text
                                      FROM (SELECT (regexp_match(c.relname, '_p(\d{4}_\d{2}_\d{2})$'))[1] AS s
                                              FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                                             WHERE i.inhparent = 'public.history_runs'::regclass) x,
                                           LATERAL (SELECT to_date(x.s, 'YYYY_MM_DD') AS partition_day) p
                                     WHERE x.s IS NOT NULL),
                                  p_jobmon := false);
    UPDATE partman.part_config
       SET retention = '90 days', retention_keep_table = false, retention_keep_index = false,
           infinite_time_partitions = true
     WHERE parent_table = 'public.history_rollup_push_groups';
END
$$;

-- Adds up to p_limit queued runs to the rollup, in the caller's transaction; returns how many
-- (0: the queue is empty; -1: another session is applying, try later).
CREATE FUNCTION history_rollup_apply(p_limit integer) RETURNS integer
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
        complete_results boolean, project text, branch text, revision text) ON COMMIT DROP;
    TRUNCATE rollup_runs;
    INSERT INTO rollup_runs
    SELECT r.id, r.run_at, (r.run_at AT TIME ZONE 'UTC')::date, r.repository, r.branch_class,
           r.branch_key, r.push, r.pr, r.complete_results, r.project, r.branch, r.revision
      FROM rollup_chunk c
     CROSS JOIN LATERAL (SELECT x.* FROM history_runs x
                          WHERE x.id = c.run_id AND x.run_at = c.run_at) r
     WHERE c.added;
    PERFORM history_rollup_add_groups();
    PERFORM history_rollup_add_tests(NULL);
    RETURN n;
END
$$;
COMMENT ON FUNCTION history_rollup_apply(integer) IS
    'Adds up to the given number of queued test history runs to the per-day rollup (history_rollup_*), in one transaction; returns how many, 0 when none are queued, -1 when another session holds the rollup''s lock.';

-- The group figures of the runs in rollup_runs: runs per group and day, the pushes' days.
CREATE FUNCTION history_rollup_add_groups() RETURNS void
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS rollup_group_rows (repository text, group_name text, day date,
        branch_class text, push text) ON COMMIT DROP;
    TRUNCATE rollup_group_rows;
    -- each run's groups through the primary key of its own partition
    INSERT INTO rollup_group_rows
    SELECT r.repository, g.group_name, r.day, r.branch_class, r.push
      FROM rollup_runs r
     CROSS JOIN LATERAL (SELECT x.group_name FROM history_groups x
                          WHERE x.run_id = r.id AND x.run_at = r.run_at) g
     WHERE NOT r.complete_results;

    INSERT INTO history_rollup_groups AS x (repository, group_name, day, branch_class, runs)
    SELECT g.repository, g.group_name, g.day, g.branch_class, count(*)
      FROM rollup_group_rows g GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (repository, group_name, day, branch_class)
    DO UPDATE SET runs = x.runs + EXCLUDED.runs;

    -- Each (push, group): its days before and after, and what that changes in the counts of
    -- pushes by previous day.
    INSERT INTO history_rollup_pushes AS x (repository, push, first_day, min_day, last_day)
    SELECT g.repository, g.push, min(g.day), min(g.day), max(g.day) FROM rollup_group_rows g
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (repository, push) DO UPDATE
       SET min_day = least(x.min_day, EXCLUDED.min_day),
           last_day = greatest(x.last_day, EXCLUDED.last_day)
     WHERE EXCLUDED.last_day > x.last_day OR EXCLUDED.min_day < x.min_day;
    CREATE TEMP TABLE IF NOT EXISTS rollup_push_days (repository text, push text,
        group_name text, first_day date, old_days date[], old_main date[], new_days date[],
        new_main date[]) ON COMMIT DROP;
    TRUNCATE rollup_push_days;
    ANALYZE rollup_group_rows;
    -- (array_agg DISTINCT gives the days sorted; a pair seen before merges its days)
    INSERT INTO rollup_push_days
    SELECT o.repository, o.push, o.group_name, p.first_day, x.days, x.main_days,
           CASE WHEN x.days IS NULL OR x.days @> o.days THEN coalesce(x.days, o.days)
                ELSE ARRAY(SELECT DISTINCT d FROM unnest(x.days || o.days) d ORDER BY d) END,
           CASE WHEN x.main_days IS NULL OR x.main_days @> o.main_days
                THEN coalesce(x.main_days, o.main_days)
                ELSE ARRAY(SELECT DISTINCT d FROM unnest(x.main_days || o.main_days) d
                            ORDER BY d) END
      FROM (SELECT g.repository, g.push, g.group_name, array_agg(DISTINCT g.day) AS days,
                   coalesce(array_agg(DISTINCT g.day) FILTER (WHERE g.branch_class = 'main'),
                            '{}') AS main_days
              FROM rollup_group_rows g GROUP BY 1, 2, 3) o
      JOIN history_rollup_pushes p ON p.repository = o.repository AND p.push = o.push
      LEFT JOIN LATERAL (
            SELECT x.days, x.main_days FROM history_rollup_push_groups x
             WHERE x.repository = o.repository AND x.push = o.push
               AND x.group_name = o.group_name AND x.first_day = p.first_day
            OFFSET 0) x ON true; -- (not flattened: the push's partition, by its first day)
    DELETE FROM rollup_push_days
     WHERE new_days = old_days AND new_main = old_main;

    INSERT INTO history_rollup_group_pushes AS x (repository, group_name, day, scope, prev_day, pushes)
    SELECT c.repository, c.group_name, c.day, c.scope, c.prev_day, sum(c.n)
      FROM (SELECT p.repository, p.group_name, a.day, 'all' AS scope,
                   coalesce(p.new_days[a.i - 1], '-infinity') AS prev_day, 1 AS n
              FROM rollup_push_days p, unnest(p.new_days) WITH ORDINALITY a(day, i)
            UNION ALL
            SELECT p.repository, p.group_name, a.day, 'all', coalesce(p.old_days[a.i - 1], '-infinity'), -1
              FROM rollup_push_days p, unnest(p.old_days) WITH ORDINALITY a(day, i)
            UNION ALL
            SELECT p.repository, p.group_name, a.day, 'main', coalesce(p.new_main[a.i - 1], '-infinity'), 1
              FROM rollup_push_days p, unnest(p.new_main) WITH ORDINALITY a(day, i)
            UNION ALL
            SELECT p.repository, p.group_name, a.day, 'main', coalesce(p.old_main[a.i - 1], '-infinity'), -1
              FROM rollup_push_days p, unnest(p.old_main) WITH ORDINALITY a(day, i)) c
     GROUP BY 1, 2, 3, 4, 5
    HAVING sum(c.n) <> 0
     ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (repository, group_name, day, scope, prev_day)
    DO UPDATE SET pushes = x.pushes + EXCLUDED.pushes;

    INSERT INTO history_rollup_push_groups AS x (repository, first_day, push, group_name, days, main_days)
    SELECT p.repository, p.first_day, p.push, p.group_name, p.new_days, p.new_main
      FROM rollup_push_days p ORDER BY 1, 3, 4
    ON CONFLICT (repository, push, group_name, first_day)
    DO UPDATE SET days = EXCLUDED.days, main_days = EXCLUDED.main_days;
END
$$;

-- The test figures: of the runs in rollup_runs (p_run_ids NULL), or of the given runs when a
-- day is counted again (p_run_ids: every run of the day, whose per-test rows the caller has
-- deleted; only the per-test tables are written then).
CREATE FUNCTION history_rollup_add_tests(p_run_ids bigint[]) RETURNS void
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS rollup_test_rows (run_id bigint, run_at timestamptz, day date,
        repository text, branch_class text, branch_key text, push text, pr integer,
        complete_results boolean, test text, group_name text, failed boolean, covered boolean,
        first_failure jsonb) ON COMMIT DROP;
    TRUNCATE rollup_test_rows;
    IF p_run_ids IS NULL THEN
        INSERT INTO rollup_test_rows
        SELECT r.id, r.run_at, r.day, r.repository, r.branch_class, r.branch_key, r.push, r.pr,
               r.complete_results, t.test, t.group_name, t.failed,
               NOT r.complete_results AND t.group_name <> ''
               AND EXISTS (SELECT 1 FROM history_groups g WHERE g.run_id = r.id
                              AND g.run_at = r.run_at AND g.group_name = t.group_name),
               CASE WHEN t.failed THEN jsonb_build_object('project', r.project, 'branch', r.branch,
                    'push', r.push, 'revision', r.revision, 'signature', t.signature) END
          FROM rollup_runs r
         CROSS JOIN LATERAL (SELECT x.* FROM history_tests x
                              WHERE x.run_id = r.id AND x.run_at = r.run_at) t;
    ELSE
        INSERT INTO rollup_test_rows
        SELECT r.id, r.run_at, (r.run_at AT TIME ZONE 'UTC')::date, r.repository, r.branch_class,
               r.branch_key, r.push, r.pr, r.complete_results, t.test, t.group_name, t.failed,
               NOT r.complete_results AND t.group_name <> ''
               AND EXISTS (SELECT 1 FROM history_groups g WHERE g.run_id = r.id
                              AND g.run_at = r.run_at AND g.group_name = t.group_name),
               CASE WHEN t.failed THEN jsonb_build_object('project', r.project, 'branch', r.branch,
                    'push', r.push, 'revision', r.revision, 'signature', t.signature) END
          FROM history_runs r JOIN history_tests t ON t.run_id = r.id AND t.run_at = r.run_at
         WHERE r.id = ANY (p_run_ids);
    END IF;

    INSERT INTO history_rollup_tests AS x (repository, test, day, branch_class, runs, failures,
                                           group_min, stray_pushes, failed_pushes, prs,
                                           first_failure_at, first_failure_run, first_failure)
    SELECT t.repository, t.test, t.day, t.branch_class, count(*), count(*) FILTER (WHERE t.failed),
           min(t.group_name),
           coalesce(array_agg(DISTINCT t.push) FILTER (WHERE NOT t.covered), '{}'),
           coalesce(array_agg(DISTINCT t.push) FILTER (WHERE t.failed), '{}'),
           coalesce(array_agg(DISTINCT t.pr) FILTER (WHERE t.failed AND t.pr IS NOT NULL), '{}'),
           min(t.run_at) FILTER (WHERE t.failed),
           (array_agg(t.run_id ORDER BY t.run_at, t.run_id) FILTER (WHERE t.failed))[1],
           (array_agg(t.first_failure ORDER BY t.run_at, t.run_id) FILTER (WHERE t.failed))[1]
      FROM rollup_test_rows t GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (repository, test, day, branch_class) DO UPDATE SET
        runs = x.runs + EXCLUDED.runs,
        failures = x.failures + EXCLUDED.failures,
        group_min = least(x.group_min, EXCLUDED.group_min),
        stray_pushes = ARRAY(SELECT DISTINCT p FROM unnest(x.stray_pushes || EXCLUDED.stray_pushes) p ORDER BY p),
        failed_pushes = ARRAY(SELECT DISTINCT p FROM unnest(x.failed_pushes || EXCLUDED.failed_pushes) p ORDER BY p),
        prs = ARRAY(SELECT DISTINCT p FROM unnest(x.prs || EXCLUDED.prs) p ORDER BY p),
        first_failure_at = CASE WHEN x.first_failure_at IS NULL
                                  OR (EXCLUDED.first_failure_at, EXCLUDED.first_failure_run)
                                     < (x.first_failure_at, x.first_failure_run)
                                THEN coalesce(EXCLUDED.first_failure_at, x.first_failure_at)
                                ELSE x.first_failure_at END,
        first_failure_run = CASE WHEN x.first_failure_at IS NULL
                                  OR (EXCLUDED.first_failure_at, EXCLUDED.first_failure_run)
                                     < (x.first_failure_at, x.first_failure_run)
                                 THEN coalesce(EXCLUDED.first_failure_run, x.first_failure_run)
                                 ELSE x.first_failure_run END,
        first_failure = CASE WHEN x.first_failure_at IS NULL
                              OR (EXCLUDED.first_failure_at, EXCLUDED.first_failure_run)
                                 < (x.first_failure_at, x.first_failure_run)
                             THEN coalesce(EXCLUDED.first_failure, x.first_failure)
                             ELSE x.first_failure END;

    INSERT INTO history_rollup_test_branches AS x (repository, test, day, branch_key, first_at, last_at)
    SELECT t.repository, t.test, t.day, t.branch_key, min(t.run_at), max(t.run_at)
      FROM rollup_test_rows t WHERE t.failed AND t.branch_class <> 'main'
     GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (repository, test, day, branch_key) DO UPDATE SET
        first_at = least(x.first_at, EXCLUDED.first_at), last_at = greatest(x.last_at, EXCLUDED.last_at);

    IF p_run_ids IS NOT NULL THEN
        RETURN; -- a day counted again: merges are of complete runs, which have no group figures
    END IF;

    -- Tests and groups: the pairs known before these runs, the pairs they make known.
    CREATE TEMP TABLE IF NOT EXISTS rollup_known (repository text, test text, group_name text)
        ON COMMIT DROP;
    TRUNCATE rollup_known;
    INSERT INTO rollup_known
    SELECT DISTINCT x.repository, x.test, x.group_name
      FROM (SELECT DISTINCT repository, test FROM rollup_test_rows WHERE NOT complete_results) t
      JOIN history_rollup_test_groups x ON x.repository = t.repository AND x.test = t.test
     WHERE x.own_rows > 0;
    CREATE TEMP TABLE IF NOT EXISTS rollup_new_pairs (repository text, test text, group_name text)
        ON COMMIT DROP;
    TRUNCATE rollup_new_pairs;
    INSERT INTO rollup_new_pairs
    SELECT DISTINCT t.repository, t.test, t.group_name FROM rollup_test_rows t
     WHERE NOT t.complete_results AND t.group_name <> ''
    EXCEPT SELECT * FROM rollup_known;

    -- A pair made known now: its overlap on every day is counted from the raw rows (runs
    -- still queued are left to their turn); what was kept of it before is replaced.
    DELETE FROM history_rollup_test_groups x USING rollup_new_pairs p
     WHERE x.repository = p.repository AND x.test = p.test AND x.group_name = p.group_name;
    INSERT INTO history_rollup_test_groups (repository, test, group_name, day, branch_class, overlap)
    SELECT p.repository, p.test, p.group_name, (r.run_at AT TIME ZONE 'UTC')::date, r.branch_class,
           count(*)
      FROM rollup_new_pairs p
      JOIN history_tests t ON t.test = p.test
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
       AND r.repository = p.repository AND NOT r.complete_results
     WHERE EXISTS (SELECT 1 FROM history_groups g WHERE g.run_id = t.run_id
                      AND g.run_at = t.run_at AND g.group_name = p.group_name)
       AND NOT EXISTS (SELECT 1 FROM history_rollup_queue q WHERE q.run_id = t.run_id AND q.added)
     GROUP BY 1, 2, 3, 4, 5;

    -- Own rows of every pair, and the overlap of these runs for pairs known before.
    INSERT INTO history_rollup_test_groups AS x (repository, test, group_name, day, branch_class,
                                                 own_rows, overlap)
    SELECT c.repository, c.test, c.group_name, c.day, c.branch_class, sum(c.own_rows), sum(c.overlap)
      FROM (SELECT t.repository, t.test, t.group_name, t.day, t.branch_class, 1 AS own_rows,
                   0 AS overlap
              FROM rollup_test_rows t WHERE NOT t.complete_results AND t.group_name <> ''
            UNION ALL
            SELECT t.repository, t.test, k.group_name, t.day, t.branch_class, 0, 1
              FROM rollup_test_rows t
              JOIN rollup_known k ON k.repository = t.repository AND k.test = t.test
             WHERE NOT t.complete_results
               AND EXISTS (SELECT 1 FROM history_groups g WHERE g.run_id = t.run_id
                              AND g.run_at = t.run_at AND g.group_name = k.group_name)) c
     GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (repository, test, group_name, day, branch_class) DO UPDATE SET
        own_rows = x.own_rows + EXCLUDED.own_rows, overlap = x.overlap + EXCLUDED.overlap;
END
$$;

-- 0014's history_flakes on the raw rows, unchanged but for joins within one partition.
CREATE FUNCTION history_flakes_raw(p_repository text, p_since timestamptz, p_until timestamptz,
                                   p_main_only boolean, p_min_branches integer,
                                   p_flaky_window interval)
RETURNS TABLE (test text, group_name text, runs bigint, failures bigint,
               failure_rate double precision, pushes bigint, pushes_failed bigint,
               push_failure_chance double precision, branches bigint, prs bigint,
               first_failure_at timestamptz, first_failure_project text,
               first_failure_branch text, first_failure_push text,
               first_failure_revision text, first_failure_signature text, flaky boolean)
LANGUAGE sql STABLE SET jit = off AS $$
WITH failing AS (
    SELECT t.test, r.branch_key, r.branch_class, r.run_at
      FROM history_tests t
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
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
    SELECT t.run_id, t.run_at, t.test, t.group_name, t.failed, t.signature, r.push, r.branch_key, r.pr,
           r.branch_class, r.complete_results,
           (NOT p_main_only OR r.branch_class = 'main') AS in_scope
      FROM listed l
      JOIN history_tests t ON t.test = l.test
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
     WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until
), known AS (
    SELECT DISTINCT t.test, t.group_name
      FROM listed l
      JOIN history_tests t ON t.test = l.test AND t.group_name <> ''
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at AND NOT r.complete_results
     WHERE r.repository = p_repository
), known_groups AS (
    SELECT DISTINCT k.group_name FROM known k
), group_pushes AS (
    -- the failures-only runs in scope of each known group, through the group's index
    SELECT kg.group_name, r.push
      FROM known_groups kg
     CROSS JOIN LATERAL (SELECT g.run_id, g.run_at FROM history_groups g
                          WHERE g.group_name = kg.group_name OFFSET 0) g
      JOIN history_runs r ON r.id = g.run_id AND r.run_at = g.run_at
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
          JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
         WHERE r.repository = p_repository AND t.failed AND t.test = st.test
         ORDER BY r.run_at, r.id
         LIMIT 1) ff ON true
 WHERE st.failures > 0 OR fl.test IS NOT NULL
 ORDER BY fl.test IS NOT NULL DESC, st.branches DESC, st.failures DESC, st.test
$$;
COMMENT ON FUNCTION history_flakes_raw(text, timestamptz, timestamptz, boolean, integer, interval) IS
    'history_flakes as migration 0014 computes it, on the raw rows: any window. history_flakes calls it for windows that are not whole UTC days.';

-- The same answers from the rollup, for since and until at UTC midnight and a flaky window of
-- at least a day.
CREATE FUNCTION history_flakes_rollup(p_repository text, p_since timestamptz, p_until timestamptz,
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
), recorded AS (
    -- the recorded rows in scope
    SELECT l.test, a.runs, a.failures, a.group_name, fp.n AS pushes_failed, pr.n AS prs,
           st.pushes AS stray
      FROM listed l CROSS JOIN bounds b,
           LATERAL (SELECT sum(t.runs)::bigint AS runs, sum(t.failures)::bigint AS failures,
                           min(t.group_min) AS group_name
                      FROM history_rollup_tests t
                     WHERE t.repository = p_repository AND t.test = l.test AND t.day >= b.d1
                       AND t.day < b.d2 AND t.branch_class = ANY (b.classes)) a,
           LATERAL (SELECT count(DISTINCT p) AS n
                      FROM history_rollup_tests t, unnest(t.failed_pushes) p
                     WHERE t.repository = p_repository AND t.test = l.test AND t.day >= b.d1
                       AND t.day < b.d2 AND t.branch_class = ANY (b.classes)) fp,
           LATERAL (SELECT count(DISTINCT p) AS n
                      FROM history_rollup_tests t, unnest(t.prs) p
                     WHERE t.repository = p_repository AND t.test = l.test AND t.day >= b.d1
                       AND t.day < b.d2 AND t.branch_class = ANY (b.classes)) pr,
           LATERAL (SELECT coalesce(array_agg(DISTINCT p), '{}') AS pushes
                      FROM history_rollup_tests t, unnest(t.stray_pushes) p
                     WHERE t.repository = p_repository AND t.test = l.test AND t.day >= b.d1
                       AND t.day < b.d2 AND t.branch_class = ANY (b.classes)) st
), known AS (
    -- the groups each listed test is known in (a row in it on any day)
    SELECT x.test, x.group_name
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
), overlap AS (
    SELECT k.test, k.group_name, sum(x.overlap)::bigint AS runs
      FROM known k CROSS JOIN bounds b
      JOIN history_rollup_test_groups x ON x.repository = p_repository AND x.test = k.test
                                       AND x.group_name = k.group_name
     WHERE x.day >= b.d1 AND x.day < b.d2 AND x.branch_class = ANY (b.classes)
     GROUP BY k.test, k.group_name
), derived AS (
    SELECT k.test, sum(gr.runs - coalesce(o.runs, 0))::bigint AS runs,
           min(k.group_name) FILTER (WHERE gr.runs > coalesce(o.runs, 0)) AS group_name
      FROM known k
      JOIN group_runs gr ON gr.group_name = k.group_name
      LEFT JOIN overlap o ON o.test = k.test AND o.group_name = k.group_name
     GROUP BY k.test
), known_count AS (
    SELECT k.test, count(*) AS n, min(k.group_name) AS group_name FROM known k GROUP BY k.test
), pushes AS (
    -- the pushes of the recorded rows and of the runs of the known groups: a recorded row in a
    -- run of its own group is a push of that group; the other rows' pushes are "stray"
    SELECT l.test,
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
                               WHERE k2.test = l.test
                                 AND EXISTS (SELECT 1 FROM unnest(CASE WHEN p_main_only
                                                                       THEN x.main_days
                                                                       ELSE x.days END) d
                                              WHERE d >= b.d1_pushes AND d < b.d2)
                              UNION ALL
                              SELECT s.push FROM unnest(rc.stray) s(push)) u)
           END AS pushes
      FROM listed l CROSS JOIN bounds b
      JOIN recorded rc ON rc.test = l.test
      LEFT JOIN known_count kc ON kc.test = l.test
      LEFT JOIN group_pushes gp ON gp.group_name = kc.group_name
), failing AS (
    -- failures on branches under review, per test, day and branch
    SELECT x.test, x.day, x.branch_key, x.first_at, x.last_at
      FROM listed l CROSS JOIN bounds b
      JOIN history_rollup_test_branches x ON x.repository = p_repository AND x.test = l.test
     WHERE x.day >= b.d0 AND x.day < b.d2
), breadth AS (
    SELECT f.test, count(DISTINCT f.branch_key) AS n
      FROM failing f CROSS JOIN bounds b WHERE f.day >= b.d1 GROUP BY f.test
), flaky AS (
    -- at each branch's first failure of a day in the window, the branches that failed within
    -- the flaky window before it (see the head of this file); only tests with enough
    -- branches in all are looked at
    SELECT DISTINCT f.test
      FROM failing f CROSS JOIN bounds b
      JOIN failing o ON o.test = f.test AND o.day <= f.day
                    AND o.day >= ((f.first_at - p_flaky_window) AT TIME ZONE 'UTC')::date
     WHERE f.day >= b.d1
       AND f.test IN (SELECT a.test FROM failing a GROUP BY a.test
                       HAVING count(DISTINCT a.branch_key) > p_min_branches)
       AND ((o.day > ((f.first_at - p_flaky_window) AT TIME ZONE 'UTC')::date AND o.day < f.day)
            OR (o.day = f.day AND o.first_at <= f.first_at)
            OR (o.day = ((f.first_at - p_flaky_window) AT TIME ZONE 'UTC')::date
                AND o.day < f.day AND o.last_at > f.first_at - p_flaky_window))
     GROUP BY f.test, f.branch_key, f.day, f.first_at
    HAVING count(DISTINCT o.branch_key) > p_min_branches
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
    'history_flakes from the per-day rollup (history_rollup_*): since and until at UTC midnight, a flaky window of at least a day. The same rows as history_flakes_raw over the runs the rollup holds.';

-- history_flakes: 0014's arguments, columns and answers; from the rollup when the window is
-- whole UTC days, else from the raw rows.
CREATE OR REPLACE FUNCTION history_flakes(p_repository text, p_since timestamptz, p_until timestamptz,
                               p_main_only boolean, p_min_branches integer,
                               p_flaky_window interval)
RETURNS TABLE (test text, group_name text, runs bigint, failures bigint,
               failure_rate double precision, pushes bigint, pushes_failed bigint,
               push_failure_chance double precision, branches bigint, prs bigint,
               first_failure_at timestamptz, first_failure_project text,
               first_failure_branch text, first_failure_push text,
               first_failure_revision text, first_failure_signature text, flaky boolean)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF isfinite(p_since) AND isfinite(p_until) AND p_since < p_until
       AND date_trunc('day', p_since AT TIME ZONE 'UTC') = p_since AT TIME ZONE 'UTC'
       AND date_trunc('day', p_until AT TIME ZONE 'UTC') = p_until AT TIME ZONE 'UTC'
       AND p_flaky_window >= interval '1 day' THEN
        RETURN QUERY SELECT * FROM history_flakes_rollup(p_repository, p_since, p_until, p_main_only,
                                                         p_min_branches, p_flaky_window);
    ELSE
        RETURN QUERY SELECT * FROM history_flakes_raw(p_repository, p_since, p_until, p_main_only,
                                                      p_min_branches, p_flaky_window);
    END IF;
END
$$;
COMMENT ON FUNCTION history_flakes(text, timestamptz, timestamptz, boolean, integer, interval) IS
    'Per test of a repository in [since, until): runs, failures, failure rate, breadth (pushes, branches under review, pull requests), the first failure (any signature, any time), and the flaky flag (failed on more than min_branches branches of class other within flaky_window). From the per-day rollup for whole UTC days (history_flakes_rollup), else from the raw rows (history_flakes_raw). Used by retrig flakes and retrig report.';

-- Runs and failures of one test per UTC day and branch class, from the rollup (retrig
-- report's charts; history_test_daily on the raw rows gives the same).
CREATE FUNCTION history_test_days(p_repository text, p_test text, p_since date, p_until date)
RETURNS TABLE (day date, branch_class text, runs bigint, failures bigint)
LANGUAGE sql STABLE SET jit = off AS $$
WITH horizon AS (
    SELECT h.first_day FROM history_rollup_horizon h LIMIT 1
), known AS (
    SELECT x.group_name FROM history_rollup_test_groups x, horizon h
     WHERE x.repository = p_repository AND x.test = p_test AND x.day >= h.first_day
     GROUP BY x.group_name HAVING sum(x.own_rows) > 0
), counted AS (
    SELECT t.day, t.branch_class, t.runs, t.failures FROM history_rollup_tests t
     WHERE t.repository = p_repository AND t.test = p_test AND t.day >= p_since AND t.day < p_until
    UNION ALL
    SELECT g.day, g.branch_class, g.runs, 0 FROM known k
      JOIN history_rollup_groups g ON g.repository = p_repository AND g.group_name = k.group_name
     WHERE g.day >= p_since AND g.day < p_until
    UNION ALL
    SELECT x.day, x.branch_class, -x.overlap, 0 FROM known k
      JOIN history_rollup_test_groups x ON x.repository = p_repository AND x.test = p_test
                                       AND x.group_name = k.group_name
     WHERE x.day >= p_since AND x.day < p_until
)
SELECT c.day, c.branch_class, sum(c.runs)::bigint, sum(c.failures)::bigint
  FROM counted c, horizon h WHERE c.day >= h.first_day
 GROUP BY c.day, c.branch_class HAVING sum(c.runs) > 0
 ORDER BY c.day, c.branch_class
$$;
COMMENT ON FUNCTION history_test_days(text, text, date, date) IS
    'Runs and failures of one test per UTC day in [since, until) and branch class, from the rollup (retrig report''s charts).';

-- Retention: the rollup's days go with the partitions retention drops.
CREATE OR REPLACE FUNCTION history_maintain(p_retention_days integer) RETURNS integer
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
    t text;
    n integer;
    kept date;
    first_before date;
BEGIN
    -- one maintainer at a time; another replica's call returns at once
    IF NOT pg_try_advisory_xact_lock(7274, hashtext('history_maintain')) THEN
        RETURN -1;
    END IF;
    SELECT min(to_date((regexp_match(c.relname, '_p(\d{4}_\d{2}_\d{2})$'))[1], 'YYYY_MM_DD'))
      INTO first_before
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'public.history_runs'::regclass;
    UPDATE partman.part_config
       SET retention = CASE WHEN p_retention_days > 0 THEN p_retention_days || ' days' END
     WHERE parent_table IN ('public.history_runs', 'public.history_groups', 'public.history_tests')
       AND retention IS DISTINCT FROM CASE WHEN p_retention_days > 0 THEN p_retention_days || ' days' END;
    -- the pushes' days are kept a week longer: a push first seen on a day that goes may have
    -- run on a day kept, and history_flakes_rollup reads its days from the first day kept
    UPDATE partman.part_config
       SET retention = CASE WHEN p_retention_days > 0 THEN p_retention_days + 7 || ' days' END
     WHERE parent_table = 'public.history_rollup_push_groups'
       AND retention IS DISTINCT FROM CASE WHEN p_retention_days > 0 THEN p_retention_days + 7 || ' days' END;
    FOREACH t IN ARRAY ARRAY['public.history_runs', 'public.history_groups', 'public.history_tests']
    LOOP
        PERFORM partman.run_maintenance(t, p_jobmon := false);
    END LOOP;
    -- the first day retention kept: when days went, the rollup answers from it on
    SELECT min(to_date((regexp_match(c.relname, '_p(\d{4}_\d{2}_\d{2})$'))[1], 'YYYY_MM_DD'))
      INTO kept
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'public.history_runs'::regclass;
    IF kept IS NOT NULL AND first_before IS NOT NULL AND kept > first_before THEN
        UPDATE history_rollup_horizon SET first_day = kept WHERE first_day < kept;
    END IF;
    PERFORM partman.run_maintenance('public.history_rollup_push_groups', p_jobmon := false);
    SELECT count(*) INTO n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent
     WHERE c.relname IN ('history_runs', 'history_groups', 'history_tests');
    RETURN n;
END
$$;
COMMENT ON FUNCTION history_maintain(integer) IS
    'Test history retention: sets it to the given days (0 keeps everything), creates the week ahead and drops the days past retention as whole partitions (pg_partman run_maintenance); the rollup answers from the first day kept on (history_rollup_horizon). Returns the number of partitions, -1 when another session is maintaining.';

-- The rollup's rows of days before the horizon (never read), removed after retention; up to
-- p_limit rows of each table a call. Returns the rows removed.
CREATE FUNCTION history_rollup_prune(p_limit integer) RETURNS bigint
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
    DELETE FROM history_rollup_pushes x WHERE x.first_day < h - 7
       AND NOT EXISTS (SELECT 1 FROM history_rollup_push_groups_default d
                        WHERE d.repository = x.repository AND d.push = x.push);
    GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
    RETURN n;
END
$$;
COMMENT ON FUNCTION history_rollup_prune(integer) IS
    'Removes up to the given number of rows of each rollup table that are of days before history_rollup_horizon (retention dropped them; queries never read them). Returns the rows removed.';

-- The runs stored before this migration, for the first history_rollup_apply calls.
INSERT INTO history_rollup_queue (run_id, run_at, added) SELECT id, run_at, true FROM history_runs;
