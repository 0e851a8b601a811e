-- SPDX-License-Identifier: MPL-2.0
-- 0036_github_fork_trust.sql (issue 31): who may drive a flaky-test issue. Anyone can open a
-- pull request from a fork with test names of their choosing; before, four such pull requests
-- opened one issue per name, titled by them. retrig flaky-issues now counts toward opening
-- an issue only the repository's own branches and the fork pull requests of trusted authors
-- (flaky_issues_trusted_associations, default OWNER, MEMBER, COLLABORATOR: GitHub's
-- author_association of the pull request); the other fork pull requests are shown in the
-- issue as evidence, never counted alone.
ALTER TABLE github_runs ADD COLUMN author_association text;
COMMENT ON COLUMN github_runs.author_association IS
    'GitHub''s author_association of the run''s pull request (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, NONE, ...), read from the pull request retrig looked up; NULL when unknown (no pull request found, or runs collected before migration 0036). retrig flaky-issues trusts a fork''s run only when it is one of flaky_issues_trusted_associations.';

-- The history runs (one per JUnit file of a run attempt) of runs whose head branch lives in
-- another repository than the run's: pull requests from forks.
CREATE VIEW github_fork_runs AS
SELECT f.history_run_id, g.repository, g.run_id, g.attempt, g.head_repository, g.pr,
       g.author_association
  FROM github_run_files f
  JOIN github_runs g ON g.repository = f.repository AND g.run_id = f.run_id
                    AND g.attempt = f.attempt
 WHERE g.head_repository IS NOT NULL AND lower(g.head_repository) <> lower(g.repository);
COMMENT ON VIEW github_fork_runs IS
    'History runs (history_runs.id) of GitHub runs from forks, with the pull request and its author''s association: retrig flaky-issues counts them toward opening an issue only for trusted associations (flaky_issues_trusted_associations).';
