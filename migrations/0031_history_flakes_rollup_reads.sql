-- SPDX-License-Identifier: MPL-2.0
-- 0031_history_flakes_rollup_reads.sql - history_flakes_rollup reads less (issue 23). At
-- bench_history's 50 million outcomes its 30-day window took 1.1-1.3 s against the 1 s the
-- dashboard's queries must stay under. Measured piece by piece, the time went to many small
-- reads rather than one large one:
--   * each listed test's recorded rows were looked up four times (runs and failures, failed
--     pushes, pull requests, stray pushes): they are now read in one pass over the window,
--     grouped by test, the arrays joined by history_array_cat_agg and counted once;
--   * each test's first failure sorted all its rows since the horizon: an index on
--     (repository, test, first_failure_at, first_failure_run) of the rows that have one gives
--     it with one probe;
--   * the groups a test is known in and its own runs in them (overlap) were two passes over
--     history_rollup_test_groups: they are one, the overlap summed with a FILTER.
-- The rows returned are the same, column for column (tests/integration/test_history_rollup.c
-- compares them with history_flakes_raw for every window, scope, breadth and flaky window).

-- history_array_cat_agg: moved to sql/functions/10_history_array_cat_agg.sql

-- A test's first failure since the horizon: the first row of this index at or after it.
CREATE INDEX history_rollup_tests_first_failure_idx
    ON history_rollup_tests (repository, test, first_failure_at, first_failure_run)
    WHERE first_failure_at IS NOT NULL;

-- history_flakes_rollup: see sql/functions/20_history_flakes_rollup.sql

