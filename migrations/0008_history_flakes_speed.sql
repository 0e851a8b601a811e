-- SPDX-License-Identifier: MPL-2.0
-- 0008_history_flakes_speed.sql - history_flakes (0006) with the same arguments, columns
-- and answers, faster at volume: the flaky-before-main rule counted, for every failure,
-- the distinct branches among all failures of the window (a correlated subquery over a
-- CTE, quadratic in the failures: 4-17 s at 1,000,000 outcomes, tests/bench/bench_history.c);
-- it now joins the failures of each test with each other on the test.

-- history_flakes: see sql/functions/30_history_flakes.sql
