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

-- history_rollup_enqueue: moved to sql/functions/10_history_rollup_enqueue.sql

-- trigger history_runs_rollup_enqueue: see sql/functions/10_history_rollup_enqueue.sql

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
-- history_rollup_apply: see sql/functions/20_history_rollup_apply.sql

-- history_rollup_add_groups: moved to sql/functions/10_history_rollup_add_groups.sql

-- history_rollup_add_tests: moved to sql/functions/10_history_rollup_add_tests.sql

-- 0014's history_flakes on the raw rows, unchanged but for joins within one partition.
-- history_flakes_raw: see sql/functions/20_history_flakes_raw.sql

-- The same answers from the rollup, for since and until at UTC midnight and a flaky window of
-- at least a day.
-- history_flakes_rollup: see sql/functions/20_history_flakes_rollup.sql

-- history_flakes: moved to sql/functions/30_history_flakes.sql

-- history_test_days: moved to sql/functions/10_history_test_days.sql

-- history_maintain: moved to sql/functions/10_history_maintain.sql

-- The rollup's rows of days before the horizon (never read), removed after retention; up to
-- p_limit rows of each table a call. Returns the rows removed.
-- history_rollup_prune: see sql/functions/10_history_rollup_prune.sql

-- The runs stored before this migration, for the first history_rollup_apply calls.
INSERT INTO history_rollup_queue (run_id, run_at, added) SELECT id, run_at, true FROM history_runs;
