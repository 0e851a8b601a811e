-- SPDX-License-Identifier: MPL-2.0
-- 0029_history_flakes_rollup_scale.sql - history_flakes_rollup (0020) at Firefox's volume
-- (issue 23). At 50 million outcomes over 30 days, 7 whole days took 2.9 s and 30 days
-- 12.7 s, where the dashboard's target is 1 s. Measured on bench_history's database
-- (EXPLAIN ANALYZE through auto_explain), with each test's failing branches made ten times
-- denser to stand for that volume, the time went to:
--   * the flaky rule: a self-join of each test's failing (day, branch) rows over the flaky
--     window, whose size grows with the square of the branches failing a test per window.
--     It is now a sweep, linear after a sort: a branch's failures of a day hold it "within
--     the flaky window" over [first failure, last failure + window), and those spans, cut
--     where the branch's next day of failures starts, do not overlap; a running sum of the
--     spans' starts and ends, ordered by time, counts the branches at each first failure.
--     Before that, a test with more than min_branches branches failing on one day of the
--     window is flaky at once (at the last of their first failures that day all of them
--     are within the window), so only the sparse tests are swept;
--   * the per-group look-ups of the groups' runs and pushes, which read a heap page for
--     each (group, day) row: the primary keys of history_rollup_groups and
--     history_rollup_group_pushes now carry the counts (INCLUDE), so they are index-only
--     scans once autovacuum has marked the pages of past days all-visible;
--   * joins of every listed test with every test's push count (their plans compared each pair:
--     the count is now built once, MATERIALIZED, and found by hash);
--   * the failing rows read through a hash of all of them joined to the listed tests: they
--     are read by day alone now, the rows of tests not listed being dropped at the end.
-- On that database, 7 days went from 3.5 s to 0.7 s and 30 days from 14.4 s to 1.0 s. The
-- answers are the same rows (tests/integration/test_history_rollup.c compares them with
-- history_flakes_raw's on every column).
ALTER TABLE history_rollup_groups
    DROP CONSTRAINT history_rollup_groups_pkey,
    ADD CONSTRAINT history_rollup_groups_pkey
        PRIMARY KEY (repository, group_name, day, branch_class) INCLUDE (runs);
ALTER TABLE history_rollup_group_pushes
    DROP CONSTRAINT history_rollup_group_pushes_pkey,
    ADD CONSTRAINT history_rollup_group_pushes_pkey
        PRIMARY KEY (repository, group_name, day, scope, prev_day) INCLUDE (pushes);

-- history_flakes_rollup: see sql/functions/20_history_flakes_rollup.sql

-- history_flakes: 0014's arguments, columns and answers; from the rollup when the window is
