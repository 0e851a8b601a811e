-- SPDX-License-Identifier: MPL-2.0
-- 0026_history_tests_days.sql - the charts of the flaky-test page (retrig report) from the
-- per-day rollup. 0020's history_test_days answers for one test; the page draws up to
-- thousands, and reading their runs from the raw partitions (0021's history_run_marks) took
-- 34 s for 1,000 tests over 30 days at a million outcomes. This is history_test_days for a
-- list of tests in one statement: the same counting (a test's own rows, plus the runs of its
-- known groups in runs that record failures only, less the runs counted both ways), per test,
-- UTC day and branch class.

-- history_tests_days: moved to sql/functions/10_history_tests_days.sql

