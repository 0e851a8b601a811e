-- SPDX-License-Identifier: MPL-2.0
-- 0016_github.sql - the test history of a GitHub-hosted project (retrig collect-github) and
-- the issues retrig keeps about its flaky tests (retrig flaky-issues).
--
-- collect-github reads the completed GitHub Actions workflow runs of a repository on every
-- branch and pull request, each attempt of a re-run on its own, downloads their JUnit
-- artifacts and stores every outcome in the test history (history_runs with source github,
-- one run per JUnit file of an attempt), remembering per run attempt what it found and
-- what it could not use (github_runs, github_run_gaps), per repository and workflow the
-- newest run stored (github_collect_state), and the ETag of each listing page read
-- (github_etags) for conditional requests. flaky-issues keeps one issue per flaky test
-- (flaky_issues) in GitHub Issues or Bugzilla.

ALTER TABLE history_runs DROP CONSTRAINT history_runs_source_check;
ALTER TABLE history_runs ADD CONSTRAINT history_runs_source_check
    CHECK (source IN ('taskcluster', 'junit', 'github'));
COMMENT ON COLUMN history_runs.source IS
    'Where the results came from: taskcluster (errorsummary artifacts), junit (retrig ingest-junit) or github (JUnit artifacts read by retrig collect-github).';

-- One row per attempt of a workflow run that collect-github finished with.
CREATE TABLE github_runs (
    repository        text        NOT NULL,
    run_id            bigint      NOT NULL CHECK (run_id > 0),
    attempt           integer     NOT NULL CHECK (attempt > 0),
    workflow_id       bigint,
    workflow_path     text,
    workflow_name     text,
    event             text        NOT NULL,
    conclusion        text,
    head_branch       text        NOT NULL,
    head_sha          text        NOT NULL,
    head_repository   text,
    pr                integer     CHECK (pr > 0),
    branch_key        text        NOT NULL,
    main              boolean     NOT NULL,
    html_url          text,
    created_at        timestamptz NOT NULL,
    run_started_at    timestamptz NOT NULL,
    artifacts         integer     NOT NULL DEFAULT 0,
    expired_artifacts integer     NOT NULL DEFAULT 0,
    junit_files       integer     NOT NULL DEFAULT 0,
    outcomes          integer     NOT NULL DEFAULT 0,
    collected_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repository, run_id, attempt)
);
CREATE INDEX github_runs_repository_started_idx ON github_runs (repository, run_started_at);

COMMENT ON TABLE github_runs IS
    'Every GitHub Actions workflow run attempt retrig collect-github finished with (its outcomes stored, or its gaps recorded); a run attempt is read once.';
COMMENT ON COLUMN github_runs.repository IS 'OWNER/NAME, as retrig flakes --project names it.';
COMMENT ON COLUMN github_runs.run_id IS 'The workflow run id (GitHub''s id of the run, the same for all its attempts).';
COMMENT ON COLUMN github_runs.attempt IS 'The run attempt (1, then 2 and up for re-runs); each attempt is a retrigger of the same commit.';
COMMENT ON COLUMN github_runs.workflow_id IS 'GitHub''s id of the workflow.';
COMMENT ON COLUMN github_runs.workflow_path IS 'The workflow file (.github/workflows/tests.yaml).';
COMMENT ON COLUMN github_runs.workflow_name IS 'The workflow''s name as the run shows it.';
COMMENT ON COLUMN github_runs.event IS 'What started the run: push, pull_request, schedule, workflow_dispatch, ...';
COMMENT ON COLUMN github_runs.conclusion IS 'The attempt''s conclusion: success, failure, cancelled, timed_out, ...';
COMMENT ON COLUMN github_runs.head_branch IS 'The branch the run tested (of the fork for a pull request from a fork).';
COMMENT ON COLUMN github_runs.head_sha IS 'The commit the run tested.';
COMMENT ON COLUMN github_runs.head_repository IS 'OWNER/NAME of the repository holding head_branch: a fork''s for pull requests from forks.';
COMMENT ON COLUMN github_runs.pr IS 'The pull request number from the run''s pull_requests, NULL when none (pushes, and pull requests from forks, which GitHub does not list).';
COMMENT ON COLUMN github_runs.branch_key IS
    'What counts as one branch in the test history: "pr:<N>", "fork:<OWNER/NAME>:<branch>" for a fork without a pull request number, else the branch.';
COMMENT ON COLUMN github_runs.main IS 'True for runs of the default branch of the repository itself (branch class main).';
COMMENT ON COLUMN github_runs.html_url IS 'The run''s page on GitHub.';
COMMENT ON COLUMN github_runs.created_at IS 'When the run was created (its first attempt).';
COMMENT ON COLUMN github_runs.run_started_at IS 'When this attempt started; its outcomes are recorded at this time.';
COMMENT ON COLUMN github_runs.artifacts IS 'Artifacts of this attempt (assigned by creation time) whose name matched --artifact-pattern.';
COMMENT ON COLUMN github_runs.expired_artifacts IS 'Of those, the ones GitHub had already deleted (expired): counted, not read.';
COMMENT ON COLUMN github_runs.junit_files IS 'JUnit XML files read from the artifacts.';
COMMENT ON COLUMN github_runs.outcomes IS 'Test outcomes stored from those files (one per test and file).';
COMMENT ON COLUMN github_runs.collected_at IS 'When collect-github finished with the attempt.';

-- What could not be used, per run attempt.
CREATE TABLE github_run_gaps (
    repository  text        NOT NULL,
    run_id      bigint      NOT NULL,
    attempt     integer     NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('no-junit-artifact', 'unparsable-file',
                                                     'cancelled', 'expired-artifact',
                                                     'too-big', 'download-failed')),
    artifact    text        NOT NULL DEFAULT '',
    file        text        NOT NULL DEFAULT '',
    detail      text,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repository, run_id, attempt, kind, artifact, file),
    FOREIGN KEY (repository, run_id, attempt) REFERENCES github_runs ON DELETE CASCADE
);
COMMENT ON TABLE github_run_gaps IS
    'Data quality: per run attempt what collect-github could not use (retrig flakes --format json, "gaps").';
COMMENT ON COLUMN github_run_gaps.repository IS 'OWNER/NAME.';
COMMENT ON COLUMN github_run_gaps.run_id IS 'The workflow run id.';
COMMENT ON COLUMN github_run_gaps.attempt IS 'The run attempt.';
COMMENT ON COLUMN github_run_gaps.kind IS
    'no-junit-artifact (no artifact with a JUnit file), unparsable-file (not well-formed JUnit XML), cancelled (the attempt was cancelled), expired-artifact (deleted by GitHub before it was read), too-big (over a size cap: zip entries, total or per-file bytes), download-failed.';
COMMENT ON COLUMN github_run_gaps.artifact IS 'The artifact''s name, "" for the whole attempt.';
COMMENT ON COLUMN github_run_gaps.file IS 'The file inside the artifact, "" for the whole artifact.';
COMMENT ON COLUMN github_run_gaps.detail IS 'The parser''s or the cap''s message.';
COMMENT ON COLUMN github_run_gaps.recorded_at IS 'When it was recorded.';

-- Which history run each JUnit file of a run attempt became.
CREATE TABLE github_run_files (
    history_run_id bigint  PRIMARY KEY REFERENCES history_runs (id) ON DELETE CASCADE,
    repository     text    NOT NULL,
    run_id         bigint  NOT NULL,
    attempt        integer NOT NULL,
    artifact       text    NOT NULL,
    file           text    NOT NULL
);
CREATE INDEX github_run_files_run_idx ON github_run_files (repository, run_id, attempt);
COMMENT ON TABLE github_run_files IS 'The history run (history_runs, source github) of each JUnit file of a run attempt.';
COMMENT ON COLUMN github_run_files.history_run_id IS 'The history run (history_runs.id); its run_key is "<run_id>/<attempt>/<artifact>/<file>".';
COMMENT ON COLUMN github_run_files.repository IS 'OWNER/NAME.';
COMMENT ON COLUMN github_run_files.run_id IS 'The workflow run id.';
COMMENT ON COLUMN github_run_files.attempt IS 'The run attempt.';
COMMENT ON COLUMN github_run_files.artifact IS 'The artifact''s name.';
COMMENT ON COLUMN github_run_files.file IS 'The JUnit file''s path inside the artifact.';

-- Tests that failed on one attempt of a run and passed on a later attempt of the same run
-- (the same commit): a re-run that turned red into green, strong evidence of a flaky test.
CREATE VIEW github_rerun_flips AS
SELECT f1.repository, t1.test, f1.run_id, r1.revision AS head_sha, r1.branch_key,
       f1.attempt AS failed_attempt, min(f2.attempt) AS passed_attempt, min(r1.run_at) AS failed_at
  FROM history_tests t1
  JOIN github_run_files f1 ON f1.history_run_id = t1.run_id
  JOIN history_runs r1 ON r1.id = t1.run_id
  JOIN github_run_files f2 ON f2.repository = f1.repository AND f2.run_id = f1.run_id
                          AND f2.attempt > f1.attempt
  JOIN history_tests t2 ON t2.run_id = f2.history_run_id AND t2.test = t1.test
                       AND NOT t2.failed AND t2.status = 'PASS'
 WHERE t1.failed
 GROUP BY f1.repository, t1.test, f1.run_id, r1.revision, r1.branch_key, f1.attempt;
COMMENT ON VIEW github_rerun_flips IS
    'A test that failed on an attempt of a workflow run and passed on a later attempt of the same run (same commit): re-run flips, shown by retrig flakes.';

-- Per repository and workflow ("*": every workflow), how far collection got.
CREATE TABLE github_collect_state (
    repository         text        NOT NULL,
    workflow           text        NOT NULL,
    newest_run_id      bigint,
    newest_created_at  timestamptz,
    runs_stored        bigint      NOT NULL DEFAULT 0,
    last_pass_started  timestamptz,
    last_pass_finished timestamptz,
    last_stop_reason   text,
    PRIMARY KEY (repository, workflow)
);
COMMENT ON TABLE github_collect_state IS
    'How far retrig collect-github got, per repository and workflow: the next pass lists runs created since a few days before the newest one stored (re-runs of older runs included).';
COMMENT ON COLUMN github_collect_state.repository IS 'OWNER/NAME.';
COMMENT ON COLUMN github_collect_state.workflow IS 'The workflow file given with --workflow, "*" for every workflow.';
COMMENT ON COLUMN github_collect_state.newest_run_id IS 'The newest run (by creation) of which an attempt was stored.';
COMMENT ON COLUMN github_collect_state.newest_created_at IS 'When that run was created.';
COMMENT ON COLUMN github_collect_state.runs_stored IS 'Run attempts stored so far.';
COMMENT ON COLUMN github_collect_state.last_pass_started IS 'When the last pass started.';
COMMENT ON COLUMN github_collect_state.last_pass_finished IS 'When the last pass that went through the whole listing finished, NULL while none did.';
COMMENT ON COLUMN github_collect_state.last_stop_reason IS 'Why the last pass stopped early (rate-limit, budget, signal), NULL when it did not.';

-- Conditional requests: the ETag of each listing page read in full.
CREATE TABLE github_etags (
    url        text        PRIMARY KEY,
    etag       text        NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE github_etags IS
    'The ETag of listing pages (run lists) whose every run was stored; sent as If-None-Match, a 304 answer means nothing new (and costs no rate limit).';
COMMENT ON COLUMN github_etags.url IS 'The page''s URL (API base included).';
COMMENT ON COLUMN github_etags.etag IS 'The ETag GitHub sent with it.';
COMMENT ON COLUMN github_etags.updated_at IS 'When it was stored.';

-- One issue per flaky test of a project.
CREATE TABLE flaky_issues (
    project        text        NOT NULL,
    test           text        NOT NULL,
    marker         text        NOT NULL,
    tracker        text        NOT NULL CHECK (tracker IN ('github', 'bugzilla')),
    state          text        NOT NULL CHECK (state IN ('open', 'closed')),
    issue_number   bigint      NOT NULL,
    issue_url      text        NOT NULL,
    comment_id     bigint,
    opened_at      timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    closed_at      timestamptz,
    reopened_at    timestamptz,
    last_failure_at timestamptz,
    figures        jsonb       NOT NULL,
    PRIMARY KEY (project, test),
    UNIQUE (project, marker)
);
COMMENT ON TABLE flaky_issues IS
    'The issue retrig flaky-issues keeps for each flaky test: opened once, its figures comment edited while it stays flaky, closed after flaky_issue_quiet_days without a failure, reopened when it fails again.';
COMMENT ON COLUMN flaky_issues.project IS 'The test history repository (OWNER/NAME), as retrig flakes --project names it.';
COMMENT ON COLUMN flaky_issues.test IS 'The test (history_tests.test).';
COMMENT ON COLUMN flaky_issues.marker IS
    'The hidden marker in the issue body, "retrig-flaky: <16 hex digits of FNV-1a 64 of project NUL test>", searched before creating so that a test never gets two issues.';
COMMENT ON COLUMN flaky_issues.tracker IS 'github (GitHub Issues) or bugzilla.';
COMMENT ON COLUMN flaky_issues.state IS 'open or closed, as retrig last left it.';
COMMENT ON COLUMN flaky_issues.issue_number IS 'The issue number (GitHub) or bug id (Bugzilla).';
COMMENT ON COLUMN flaky_issues.issue_url IS 'The issue''s page.';
COMMENT ON COLUMN flaky_issues.comment_id IS 'The figures comment retrig edits (GitHub), NULL until written.';
COMMENT ON COLUMN flaky_issues.opened_at IS 'When the issue was opened (or found by its marker).';
COMMENT ON COLUMN flaky_issues.updated_at IS 'When retrig last wrote to it.';
COMMENT ON COLUMN flaky_issues.closed_at IS 'When retrig closed it, NULL while open.';
COMMENT ON COLUMN flaky_issues.reopened_at IS 'When retrig last reopened it.';
COMMENT ON COLUMN flaky_issues.last_failure_at IS 'The last failure of the test retrig knew of when it last wrote.';
COMMENT ON COLUMN flaky_issues.figures IS 'The figures last posted: runs, failures, failure_rate, branches, prs, main_failures, push_failure_chance, prs_ran, prs_failed, rerun_flips, flaky, first_failure.';
