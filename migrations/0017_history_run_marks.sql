-- SPDX-License-Identifier: MPL-2.0
-- 0017_history_run_marks.sql - what the flaky-test page (retrig report) draws for each test:
-- its runs and failures per time slot, on main branches and elsewhere, for every test it
-- lists in one call.
--
-- The rows are those of history_test_runs (0006), counted the way history_flakes (0009)
-- counts them without building that view: for a listed test T, in [start, until),
--   recorded  its own rows (a failure, or any result of a JUnit run);
--   derived   for each group g it is known in (it has a row with g in a failures-only run of
--             the repository, at any time), the failures-only runs of g less those of them
--             that recorded T (they are recorded rows already).
-- The runs of each known group are read once per group through history_groups_group_name_idx
-- and counted per slot, however many tests the group holds.

-- history_run_marks: see sql/functions/10_history_run_marks.sql

