-- SPDX-License-Identifier: MPL-2.0
-- 0032_history_flaky_try_authors.sql - the flaky rule's breadth on try (issue 30, item 8).
-- Two ways a test looked flaky without being so:
--   one developer's try pushes: each try push was its own branch ("try:<push>"), so four
--            try pushes of one broken patch were four branches. retrig-history now keys a
--            try push by its author, the task's metadata.owner (for Gecko's tasks the push's
--            author): "try:author:<email>" (common/core/history.h, rt_history_branch_key);
--            a try run whose author is unknown keeps "try:<push>". Runs recorded before this
--            migration keep their keys (their author was not recorded).
--   a regression that landed: failures on main were never breadth (0014), but the try
--            pushes based on the broken main each failed the test on a branch of their own.
--            Now a failure under review on UTC day D is breadth only when main was not broken
--            by the test on D or on the day before: broken means that the test failed in
--            more than half of its runs on the main branches that day (runs counted as the
--            report's charts count them: history_run_marks on the raw rows,
--            history_tests_days on the rollup). An intermittent failure on main (a flaky
--            test fails in a few of its runs) leaves its try failures counted; a regression
--            fails in nearly all of them, from its landing until it is backed out or fixed.
--            Every day is decided on its own and the day before's main runs, read even when
--            they lie before the window. A try push on the evening of the landing day still
--            counts (main's runs of that day were mostly passes); from the next day on, none.
-- history_flakes_raw and history_flakes_rollup apply both rules the same way (whole days:
-- tests/integration/test_history_rollup.c compares them); the flaky flag and the branches
-- column count the same failures. Same arguments and columns as before.

COMMENT ON COLUMN history_runs.branch_key IS
    'What counts as one branch when asking how widely a test fails: the project for Taskcluster, except try and try-* where it is the push''s author ("try:author:<email>", the task''s metadata.owner, lower-cased; "try:<push>" when unknown, and for runs recorded before migration 0032), "pr:<N>" for a pull request, else the branch.';

-- history_flakes_raw: moved to sql/functions/20_history_flakes_raw.sql

-- history_flakes_rollup: moved to sql/functions/20_history_flakes_rollup.sql

