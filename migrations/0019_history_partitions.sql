-- SPDX-License-Identifier: MPL-2.0
-- 0019_history_partitions.sql - the test history's outcome tables (0006) partitioned by UTC
-- day of run_at, so that retention drops a day as whole tables (issue 23). At Firefox CI
-- volume the history grows by tens of millions of rows a day (docs/operations.md,
-- "Capacity"): deleting a day's rows would take as long as writing them, and leave the
-- tables to vacuum.
--
-- history_runs, history_groups and history_tests become declaratively partitioned tables
-- (PARTITION BY RANGE (run_at)), one partition per UTC day, created ahead and dropped after
-- history_retention_days by pg_partman (Debian's postgresql-15-partman; schema partman).
-- Rows of a day without a partition (older than the first partition, or more than the
-- premade days ahead) go to each table's default partition, which retention leaves alone.
-- The groups and tests carry their run's run_at, so that they are partitioned with it and a
-- query on a span of days reads only those days.
--
-- Unique keys on a partitioned table must include the partition key, so:
--   history_runs  PRIMARY KEY (id, run_at); the run's key is UNIQUE (source, project,
--                 run_key, run_at) under its old name, history_runs_source_project_run_key_key.
--                 run_at is part of what the run is: the resolved time of the Taskcluster
--                 run (from the Pulse message, the same in every redelivery), the attempt's
--                 start for GitHub, --time or the testsuite timestamp for JUnit. A second
--                 store of the same run therefore carries the same run_at and is still a
--                 no-op (ON CONFLICT on that constraint); a JUnit re-ingest is looked up by
--                 (source, project, run_key) first (common/io/history_store.c), so a different
--                 --time merges into the stored run as before instead of adding one.
--   history_groups PRIMARY KEY (run_id, group_name, run_at)
--   history_tests  PRIMARY KEY (run_id, test, run_at)
-- The foreign keys from the groups and tests to their run are gone: a partitioned table can
-- only reference a unique key that includes the partition key, and checking it on every row
-- costs the writer as much as the row. The one writer (common/io/history_store.c) writes a
-- run and its rows in one transaction, and retention drops the same day of all three tables.
-- github_run_files.history_run_id no longer references history_runs for the same reason.
--
-- Existing rows are moved into the new tables in this migration (one statement a table);
-- the views over them are recreated as they were.

CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;

-- The views over the old tables (recreated below, unchanged).

DROP VIEW history_test_daily;
DROP VIEW history_test_runs;
DROP VIEW github_rerun_flips;
ALTER TABLE github_run_files DROP CONSTRAINT github_run_files_history_run_id_fkey;

-- The old tables, and the names of their keys and indexes, out of the way.
ALTER TABLE history_runs RENAME TO history_runs_0006;
ALTER TABLE history_groups RENAME TO history_groups_0006;
ALTER TABLE history_tests RENAME TO history_tests_0006;
ALTER TABLE history_runs_0006 RENAME CONSTRAINT history_runs_source_project_run_key_key
    TO history_runs_0006_key;
ALTER INDEX history_runs_pkey RENAME TO history_runs_0006_pkey;
ALTER INDEX history_runs_repository_run_at_idx RENAME TO history_runs_0006_repository_idx;
ALTER INDEX history_groups_pkey RENAME TO history_groups_0006_pkey;
ALTER INDEX history_groups_group_name_idx RENAME TO history_groups_0006_group_name_idx;
ALTER INDEX history_tests_pkey RENAME TO history_tests_0006_pkey;
ALTER INDEX history_tests_test_idx RENAME TO history_tests_0006_test_idx;
ALTER INDEX history_tests_signature_idx RENAME TO history_tests_0006_signature_idx;
ALTER INDEX history_tests_group_name_idx RENAME TO history_tests_0006_group_name_idx;

CREATE TABLE history_runs (
    id               bigint      NOT NULL DEFAULT nextval('history_runs_id_seq'),
    source           text        NOT NULL CHECK (source IN ('taskcluster', 'junit', 'github')),
    run_key          text        NOT NULL,
    repository       text        NOT NULL,
    project          text        NOT NULL,
    branch           text        NOT NULL,
    branch_class     text        NOT NULL CHECK (branch_class IN ('main', 'other')),
    branch_key       text        NOT NULL,
    pr               integer     CHECK (pr > 0),
    push             text        NOT NULL,
    revision         text,
    platform         text,
    label            text,
    run_at           timestamptz NOT NULL,
    complete_results boolean     NOT NULL,
    recorded_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (id, run_at),
    CONSTRAINT history_runs_source_project_run_key_key UNIQUE (source, project, run_key, run_at)
) PARTITION BY RANGE (run_at);
CREATE INDEX history_runs_repository_run_at_idx ON history_runs (repository, run_at);
-- The merge path and collect-github find a run by its key whatever its run_at.
CREATE INDEX history_runs_run_key_idx ON history_runs (run_key);
ALTER SEQUENCE history_runs_id_seq OWNED BY history_runs.id;

CREATE TABLE history_groups (
    run_id      bigint      NOT NULL,
    group_name  text        NOT NULL,
    status      text,
    duration_ms bigint,
    failed      boolean     NOT NULL,
    run_at      timestamptz NOT NULL,
    PRIMARY KEY (run_id, group_name, run_at)
) PARTITION BY RANGE (run_at);
CREATE INDEX history_groups_group_name_idx ON history_groups (group_name, run_id);

CREATE TABLE history_tests (
    run_id         bigint      NOT NULL,
    test           text        NOT NULL,
    group_name     text        NOT NULL,
    status         text        NOT NULL,
    expected       text,
    failed         boolean     NOT NULL,
    message        text,
    signature      text,
    signature_hash text,
    run_at         timestamptz NOT NULL,
    PRIMARY KEY (run_id, test, run_at)
) PARTITION BY RANGE (run_at);
CREATE INDEX history_tests_test_idx ON history_tests (test, run_id);
CREATE INDEX history_tests_signature_idx ON history_tests (signature_hash) WHERE failed;
CREATE INDEX history_tests_group_name_idx ON history_tests (group_name, test);

-- The comments of the old columns, on the new ones.
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT n.relname AS new_table, a.attname, col_description(o.oid, a.attnum) AS text
               FROM (VALUES ('history_runs'), ('history_groups'), ('history_tests')) n(relname)
               JOIN pg_class o ON o.relname = n.relname || '_0006'
               JOIN pg_attribute a ON a.attrelid = o.oid AND a.attnum > 0 AND NOT a.attisdropped
              WHERE col_description(o.oid, a.attnum) IS NOT NULL
    LOOP
        EXECUTE format('COMMENT ON COLUMN %I.%I IS %L', c.new_table, c.attname, c.text);
    END LOOP;
END
$$;
COMMENT ON TABLE history_runs IS
    'Every test run recorded for the test history: Taskcluster test task runs (retrig-history) and CI runs read from JUnit files (retrig ingest-junit, collect-github). Partitioned by UTC day of run_at (pg_partman; retention history_retention_days drops whole days).';
COMMENT ON TABLE history_groups IS
    'One row per test group of a run: errorsummary group_result (or listed groups that never finished), JUnit classnames. Partitioned by UTC day of run_at with its run.';
COMMENT ON TABLE history_tests IS
    'One row per test and run: errorsummary failures, all JUnit testcases. Partitioned by UTC day of run_at with its run.';
COMMENT ON COLUMN history_runs.run_key IS
    'The run within its project: "<taskId>/<runId>" for Taskcluster, the --run-id for JUnit. Unique with source, project and run_at (the partition key, which a redelivery repeats), so a redelivered message or a re-ingested file adds nothing.';
COMMENT ON COLUMN history_groups.run_at IS 'The run''s run_at (the partition key).';
COMMENT ON COLUMN history_tests.run_at IS 'The run''s run_at (the partition key).';

-- One partition a day, from the first day of the existing rows (at most 90 days back) to a
-- week ahead; older rows go to the default partition.
DO $$
DECLARE
    first_day date := greatest(coalesce((SELECT min(run_at) FROM history_runs_0006), now()),
                               now() - interval '90 days')::date;
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['public.history_runs', 'public.history_groups', 'public.history_tests']
    LOOP
        PERFORM partman.create_parent(t, 'run_at', 'native', 'daily', p_premake := 7,
                                      p_start_partition := first_day::text, p_jobmon := false);
    END LOOP;
    UPDATE partman.part_config
       SET retention = '90 days', retention_keep_table = false, retention_keep_index = false,
           infinite_time_partitions = true
     WHERE parent_table IN ('public.history_runs', 'public.history_groups', 'public.history_tests');
END
$$;

-- The rows, moved.
INSERT INTO history_runs SELECT * FROM history_runs_0006;
INSERT INTO history_groups (run_id, group_name, status, duration_ms, failed, run_at)
SELECT g.run_id, g.group_name, g.status, g.duration_ms, g.failed, r.run_at
  FROM history_groups_0006 g JOIN history_runs_0006 r ON r.id = g.run_id;
INSERT INTO history_tests (run_id, test, group_name, status, expected, failed, message, signature,
                           signature_hash, run_at)
SELECT t.run_id, t.test, t.group_name, t.status, t.expected, t.failed, t.message, t.signature,
       t.signature_hash, r.run_at
  FROM history_tests_0006 t JOIN history_runs_0006 r ON r.id = t.run_id;
DROP TABLE history_tests_0006;
DROP TABLE history_groups_0006;
DROP TABLE history_runs_0006;

-- The views, as 0006 and 0016 made them.
CREATE VIEW history_test_runs AS
SELECT r.id AS run_id, r.repository, r.project, r.branch, r.branch_class, r.branch_key, r.pr,
       r.push, r.revision, r.run_at, t.test, t.group_name, t.failed, t.signature,
       t.signature_hash
  FROM history_tests t
  JOIN history_runs r ON r.id = t.run_id
UNION ALL
SELECT r.id, r.repository, r.project, r.branch, r.branch_class, r.branch_key, r.pr, r.push,
       r.revision, r.run_at, k.test, g.group_name, false, NULL, NULL
  FROM history_groups g
  JOIN history_runs r ON r.id = g.run_id AND NOT r.complete_results
  JOIN (SELECT DISTINCT kr.repository, kt.group_name, kt.test
          FROM history_tests kt
          JOIN history_runs kr ON kr.id = kt.run_id AND NOT kr.complete_results
         WHERE kt.group_name <> '') k
    ON k.repository = r.repository AND k.group_name = g.group_name
 WHERE NOT EXISTS (SELECT 1 FROM history_tests x WHERE x.run_id = g.run_id AND x.test = k.test);
COMMENT ON VIEW history_test_runs IS
    'One row per run of a test, passes included: recorded results, and for errorsummary runs the runs of the test''s group in which it did not fail.';

-- history_flakes_7d: moved to sql/functions/40_history_flakes_7d.sql

-- history_flakes_main_7d: moved to sql/functions/40_history_flakes_main_7d.sql

-- history_groups_7d: moved to sql/functions/20_history_groups_7d.sql

CREATE VIEW history_test_daily AS
SELECT v.repository, v.test, date_trunc('day', v.run_at) AS day, v.branch_class,
       count(*) AS runs, count(*) FILTER (WHERE v.failed) AS failures
  FROM history_test_runs v
 GROUP BY v.repository, v.test, date_trunc('day', v.run_at), v.branch_class;
COMMENT ON VIEW history_test_daily IS 'Runs and failures per test, UTC day and branch class.';

CREATE VIEW github_rerun_flips AS
SELECT f1.repository, t1.test, f1.run_id, r1.revision AS head_sha, r1.branch_key,
       f1.attempt AS failed_attempt, min(f2.attempt) AS passed_attempt, min(r1.run_at) AS failed_at
  FROM history_tests t1
  JOIN github_run_files f1 ON f1.history_run_id = t1.run_id
  JOIN history_runs r1 ON r1.id = t1.run_id
  JOIN github_run_files f2 ON f2.repository = f1.repository AND f2.run_id = f1.run_id
                          AND f2.attempt > f1.attempt
  JOIN history_tests t2 ON t2.run_id = f2.history_run_id AND t2.test = t1.test
                       AND NOT t2.failed AND t2.status = 'PASS'
 WHERE t1.failed
 GROUP BY f1.repository, t1.test, f1.run_id, r1.revision, r1.branch_key, f1.attempt;
COMMENT ON VIEW github_rerun_flips IS
    'A test that failed on an attempt of a workflow run and passed on a later attempt of the same run (same commit): re-run flips, shown by retrig flakes.';
COMMENT ON COLUMN github_run_files.history_run_id IS
    'The history run (history_runs.id); its run_key is "<run_id>/<attempt>/<artifact>/<file>". Not a foreign key since history_runs is partitioned (0019): retention may drop the run first.';

-- Retention and partitions ahead: run by retrig-history at start and every hour, and by
-- `retrig history-maintain`. Sets the retention of the three tables to p_retention_days
-- (0: keep every day) and lets pg_partman create the partitions of the week ahead and drop
-- the days past retention, whole tables at a time. Returns the partitions after it ran.
-- history_maintain: see sql/functions/10_history_maintain.sql

