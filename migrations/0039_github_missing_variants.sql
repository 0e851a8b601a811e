-- SPDX-License-Identifier: MPL-2.0
-- 0039_github_missing_variants.sql (issue 31): a matrix job that stops uploading its report
-- is a gap. A run attempt that stored reports but none of a variant (github_run_variants,
-- 0038) that at least two of the workflow's ten runs before it reported has lost that job's
-- report (the job failed before the upload, or its upload step broke): 39 of 40 jobs
-- reporting is no longer silent. Only first attempts are judged ("re-run failed jobs" makes
-- an attempt of the failed jobs alone), and only attempts that stored some report (one that
-- stored none already has its no-junit-artifact gap). The gaps are computed when read, from
-- the runs stored, so runs collected in any order are judged alike.
CREATE VIEW github_missing_variants AS
SELECT a.repository, a.run_id, a.attempt, 'missing-variant'::text AS kind,
       m.variant AS artifact, ''::text AS file,
       format('reported by %s of the %s runs of the workflow before this one', m.runs, m.looked)
         AS detail,
       a.created_at AS recorded_at
  FROM github_runs a
 CROSS JOIN LATERAL (
       SELECT v.variant, count(DISTINCT v.run_id) AS runs,
              (SELECT count(*) FROM (SELECT 1 FROM github_runs q
                 WHERE q.repository = a.repository
                   AND q.workflow_path IS NOT DISTINCT FROM a.workflow_path
                   AND q.created_at < a.created_at AND q.junit_files > 0 AND q.attempt = 1
                 ORDER BY q.created_at DESC LIMIT 10) n) AS looked
         FROM (SELECT p.run_id FROM github_runs p
                WHERE p.repository = a.repository
                  AND p.workflow_path IS NOT DISTINCT FROM a.workflow_path
                  AND p.created_at < a.created_at AND p.junit_files > 0 AND p.attempt = 1
                ORDER BY p.created_at DESC LIMIT 10) p
         JOIN github_run_variants v ON v.repository = a.repository AND v.run_id = p.run_id
        GROUP BY v.variant) m
 WHERE a.attempt = 1 AND a.junit_files > 0 AND a.conclusion IN ('success', 'failure')
   AND m.runs >= 2
   AND NOT EXISTS (SELECT 1 FROM github_run_variants x
                    WHERE x.repository = a.repository AND x.run_id = a.run_id
                      AND x.attempt = a.attempt AND x.variant = m.variant);
COMMENT ON VIEW github_missing_variants IS
    'Gaps of kind missing-variant: a first run attempt that stored reports, but none of a variant (matrix job) that at least two of the workflow''s ten runs before it reported.';

CREATE VIEW github_gaps AS
SELECT repository, run_id, attempt, kind, artifact, file, detail, recorded_at
  FROM github_run_gaps
UNION ALL
SELECT repository, run_id, attempt, kind, artifact, file, detail, recorded_at
  FROM github_missing_variants;
COMMENT ON VIEW github_gaps IS
    'Every gap of a GitHub run attempt: those recorded as it was collected (github_run_gaps) and the variants missing from it (github_missing_variants). retrig flakes lists these.';
