-- SPDX-License-Identifier: MPL-2.0
-- 0038_github_variants.sql (issue 31): the variant of a GitHub outcome is its matrix job,
-- which names the artifact holding its JUnit report (dask/distributed:
-- "<os>-<environment>-<label>-<partition>"); a trailing "-attempt<N>" (a name made unique
-- per re-run attempt) is not part of it. retrig flakes and the flaky-test issues break a
-- test's failures down by variant, and a re-run flip now compares the same variant across
-- attempts: a test that failed on Windows in both attempts but passed on Ubuntu in attempt
-- 2 is no flip. A flip is still one per test and failed attempt; variants says which
-- matrix jobs flipped.
CREATE VIEW github_run_variants AS
SELECT history_run_id, repository, run_id, attempt, artifact, file,
       regexp_replace(artifact, '[-_. ]?attempt[-_. ]?[0-9]+$', '', 'i') AS variant
  FROM github_run_files;
COMMENT ON VIEW github_run_variants IS
    'The variant (matrix job) of each JUnit file of a GitHub run attempt: its artifact''s name without a trailing "-attempt<N>".';

CREATE OR REPLACE VIEW github_rerun_flips AS
SELECT f1.repository, t1.test, f1.run_id, r1.revision AS head_sha, r1.branch_key,
       f1.attempt AS failed_attempt, min(f2.attempt) AS passed_attempt, min(r1.run_at) AS failed_at,
       array_agg(DISTINCT f1.variant ORDER BY f1.variant) AS variants
  FROM history_tests t1
  JOIN github_run_variants f1 ON f1.history_run_id = t1.run_id
  JOIN history_runs r1 ON r1.id = t1.run_id
  JOIN github_run_variants f2 ON f2.repository = f1.repository AND f2.run_id = f1.run_id
                             AND f2.attempt > f1.attempt AND f2.variant = f1.variant
  JOIN history_tests t2 ON t2.run_id = f2.history_run_id AND t2.test = t1.test
                       AND NOT t2.failed AND t2.status = 'PASS'
 WHERE t1.failed AND t1.status <> 'FLAKY'
 GROUP BY f1.repository, t1.test, f1.run_id, r1.revision, r1.branch_key, f1.attempt
UNION ALL
SELECT f1.repository, t1.test, f1.run_id, r1.revision, r1.branch_key, f1.attempt, f1.attempt,
       r1.run_at, ARRAY[f1.variant]
  FROM history_tests t1
  JOIN github_run_variants f1 ON f1.history_run_id = t1.run_id
  JOIN history_runs r1 ON r1.id = t1.run_id
 WHERE t1.failed AND t1.status = 'FLAKY';
COMMENT ON VIEW github_rerun_flips IS
    'A test that failed on an attempt of a workflow run and passed on a later attempt of the same run (same commit) in the same variant (matrix job: github_run_variants), or failed and passed within one attempt (a JUnit FLAKY outcome: failed_attempt = passed_attempt): re-run flips, shown by retrig flakes and the flaky-test issues. variants: the variants (matrix jobs) that failed and then passed.';
