-- SPDX-License-Identifier: MPL-2.0
-- 0033_runs_reason_crash_before_tests.sql - the reason codes of runs.verdict_reason as they
-- stand (issue 30): a run whose harness crashed before any test ran is skipped with
-- crash-before-tests (a product crash, not an infrastructure failure), and every code
-- eligibility can give is listed.

COMMENT ON COLUMN runs.verdict_reason IS
    'The reason code of the verdict: not-failed, exception, not-resolved, not-test, tier, no-push, project, is-retrigger, duplicate, pool, classified, no-errorsummary, incomplete-errorsummary, no-test-failure, crash-before-tests, enough-runs, budget-exhausted, eligible.';
