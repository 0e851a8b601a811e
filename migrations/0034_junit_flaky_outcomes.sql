-- 0034_junit_flaky_outcomes.sql (issue 31): the JUnit outcomes retrig now tells apart, and a
-- test that failed and then passed within one run attempt (Surefire's and Gradle's
-- flakyFailure/flakyError, a failing and a passing testcase of one test: status FLAKY, still
-- failed) counted as a re-run flip, as strong evidence as a failed attempt re-run green.
CREATE OR REPLACE VIEW github_rerun_flips AS
SELECT f1.repository, t1.test, f1.run_id, r1.revision AS head_sha, r1.branch_key,
       f1.attempt AS failed_attempt, min(f2.attempt) AS passed_attempt, min(r1.run_at) AS failed_at
  FROM history_tests t1
  JOIN github_run_files f1 ON f1.history_run_id = t1.run_id
  JOIN history_runs r1 ON r1.id = t1.run_id
  JOIN github_run_files f2 ON f2.repository = f1.repository AND f2.run_id = f1.run_id
                          AND f2.attempt > f1.attempt
  JOIN history_tests t2 ON t2.run_id = f2.history_run_id AND t2.test = t1.test
                       AND NOT t2.failed AND t2.status = 'PASS'
 WHERE t1.failed AND t1.status <> 'FLAKY'
 GROUP BY f1.repository, t1.test, f1.run_id, r1.revision, r1.branch_key, f1.attempt
UNION ALL
SELECT f1.repository, t1.test, f1.run_id, r1.revision, r1.branch_key, f1.attempt, f1.attempt,
       r1.run_at
  FROM history_tests t1
  JOIN github_run_files f1 ON f1.history_run_id = t1.run_id
  JOIN history_runs r1 ON r1.id = t1.run_id
 WHERE t1.failed AND t1.status = 'FLAKY';
COMMENT ON VIEW github_rerun_flips IS
    'A test that failed on an attempt of a workflow run and passed on a later attempt of the same run (same commit), or failed and passed within one attempt (a JUnit FLAKY outcome: failed_attempt = passed_attempt): re-run flips, shown by retrig flakes and the flaky-test issues.';
COMMENT ON COLUMN history_tests.status IS
    'FAIL, TIMEOUT, CRASH, ERROR, ... for failures; PASS or SKIP for JUnit passes and skips; for JUnit also FLAKY (failed, then passed within the run: failed is true), DISABLED, COLLECTION_ERROR and BUILD_FAILED (no test failure: failed is false).';
