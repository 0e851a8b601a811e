-- SPDX-License-Identifier: MPL-2.0
-- 0041_history_rollup_variants.sql (issue 31): the per-day rollup of a Firefox CI test's
-- runs and failures per variant (platform and build type, the view taskcluster_run_variants
-- of migration 0040). retrig flakes, the flaky-test page and the flaky-test issues break a
-- test's failures down by variant; read from the raw rows, counting the runs of each failing
-- test's groups per variant took retrig report from 726 ms to 2,011 ms at bench_history's
-- default size (968,512 outcomes), and grows with the window's group rows (50 million at
-- Firefox scale). history_rollup_apply keeps these two tables with the others
-- (sql/functions/10_history_rollup_add_variants.sql); history_test_variants reads them for
-- a window of whole UTC days, the raw rows otherwise.
CREATE TABLE history_rollup_group_variants (
    repository text   NOT NULL,
    group_name text   NOT NULL,
    day        date   NOT NULL,
    variant    text   NOT NULL,
    runs       bigint NOT NULL,
    PRIMARY KEY (repository, group_name, day, variant)
);
COMMENT ON TABLE history_rollup_group_variants IS
    'Per repository, group, UTC day and variant (taskcluster_run_variants): the runs of the group in Taskcluster runs, which record failing tests only (a test''s runs there are its groups'' runs).';
COMMENT ON COLUMN history_rollup_group_variants.runs IS 'history_groups rows of that group in runs of that day and variant.';

CREATE TABLE history_rollup_test_variants (
    repository text   NOT NULL,
    test       text   NOT NULL,
    group_name text   NOT NULL,
    day        date   NOT NULL,
    variant    text   NOT NULL,
    recorded   bigint NOT NULL,
    failures   bigint NOT NULL,
    PRIMARY KEY (repository, test, group_name, day, variant)
);
CREATE INDEX history_rollup_test_variants_day_idx ON history_rollup_test_variants (repository, day);
COMMENT ON TABLE history_rollup_test_variants IS
    'Per repository, test, group (empty: recorded without one), UTC day and variant (taskcluster_run_variants): the test''s rows in Taskcluster runs and how many failed.';
COMMENT ON COLUMN history_rollup_test_variants.recorded IS 'history_tests rows of the test in that group, day and variant.';
COMMENT ON COLUMN history_rollup_test_variants.failures IS 'Of which failed.';

-- The runs stored before this migration and already in the rollup: counted once here (the
-- queued ones are counted by history_rollup_apply as it takes them).
INSERT INTO history_rollup_group_variants (repository, group_name, day, variant, runs)
SELECT v.repository, g.group_name, (v.run_at AT TIME ZONE 'UTC')::date, v.variant, count(*)
  FROM taskcluster_run_variants v
  JOIN history_groups g ON g.run_id = v.history_run_id AND g.run_at = v.run_at
 WHERE NOT EXISTS (SELECT 1 FROM history_rollup_queue q WHERE q.run_id = v.history_run_id AND q.added)
 GROUP BY 1, 2, 3, 4;
INSERT INTO history_rollup_test_variants (repository, test, group_name, day, variant, recorded, failures)
SELECT v.repository, t.test, t.group_name, (v.run_at AT TIME ZONE 'UTC')::date, v.variant,
       count(*), count(*) FILTER (WHERE t.failed)
  FROM taskcluster_run_variants v
  JOIN history_tests t ON t.run_id = v.history_run_id AND t.run_at = v.run_at
 WHERE NOT EXISTS (SELECT 1 FROM history_rollup_queue q WHERE q.run_id = v.history_run_id AND q.added)
 GROUP BY 1, 2, 3, 4, 5;
