-- SPDX-License-Identifier: MPL-2.0
-- 0006_history.sql - test history across all branches: every test run retrig-history sees
-- (Taskcluster errorsummary artifacts) and every JUnit file `retrig ingest-junit` reads,
-- with the questions sheriffs ask of it as views and functions: failure rates, how widely
-- a test fails (pushes, branches, pull requests), when a failure signature first appeared,
-- and which tests fail on many branches before the main branch knows.

-- One row per test run (a Taskcluster task run, or one CI run ingested from JUnit).
CREATE TABLE history_runs (
    id               bigserial   PRIMARY KEY,
    source           text        NOT NULL CHECK (source IN ('taskcluster', 'junit')),
    run_key          text        NOT NULL,
    repository       text        NOT NULL,
    project          text        NOT NULL,
    branch           text        NOT NULL,
    branch_class     text        NOT NULL CHECK (branch_class IN ('main', 'other')),
    branch_key       text        NOT NULL,
    pr               integer     CHECK (pr > 0),
    push             text        NOT NULL,
    revision         text,
    platform         text,
    label            text,
    run_at           timestamptz NOT NULL,
    complete_results boolean     NOT NULL,
    recorded_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT history_runs_source_project_run_key_key UNIQUE (source, project, run_key)
);
CREATE INDEX history_runs_repository_run_at_idx ON history_runs (repository, run_at);

COMMENT ON TABLE history_runs IS
    'Every test run recorded for the test history: Taskcluster test task runs (retrig-history) and CI runs read from JUnit files (retrig ingest-junit).';
COMMENT ON COLUMN history_runs.source IS 'Where the results came from: taskcluster (errorsummary artifacts) or junit.';
COMMENT ON COLUMN history_runs.run_key IS
    'The run within its project: "<taskId>/<runId>" for Taskcluster, the --run-id for JUnit. Unique with source and project, so a redelivered message or a re-ingested file adds nothing.';
COMMENT ON COLUMN history_runs.repository IS
    'The code base the questions are asked about (retrig flakes --project): history_repository (e.g. gecko) for every Taskcluster project, OWNER/REPO for JUnit.';
COMMENT ON COLUMN history_runs.project IS 'Treeherder project (try, autoland, mozilla-central, ...) or OWNER/REPO.';
COMMENT ON COLUMN history_runs.branch IS 'The branch: the Treeherder project, or the git branch given to ingest-junit.';
COMMENT ON COLUMN history_runs.branch_class IS
    'main for the projects in history_main_projects (and ingest-junit --main), other for try and the rest.';
COMMENT ON COLUMN history_runs.branch_key IS
    'What counts as one branch when asking how widely a test fails: the project for Taskcluster (each push on try or try-* is its own, "try:<push>"), "pr:<N>" for a pull request, else the branch.';
COMMENT ON COLUMN history_runs.pr IS 'Pull request number (ingest-junit --pr), NULL otherwise.';
COMMENT ON COLUMN history_runs.push IS 'The push: the pushlog id (else the revision) for Taskcluster, the revision for JUnit.';
COMMENT ON COLUMN history_runs.revision IS 'Head revision of the push or commit tested.';
COMMENT ON COLUMN history_runs.platform IS 'Treeherder machine platform (linux1804-64), NULL for JUnit.';
COMMENT ON COLUMN history_runs.label IS 'Task label, NULL for JUnit.';
COMMENT ON COLUMN history_runs.run_at IS 'When the run resolved (Taskcluster) or ran (JUnit --time or the testsuite timestamp).';
COMMENT ON COLUMN history_runs.complete_results IS
    'True when every test result was recorded, passes included (JUnit); false when only failures were (errorsummary), so a test''s runs are the runs of its group.';
COMMENT ON COLUMN history_runs.recorded_at IS 'When retrig stored the run.';

-- Group (manifest, test file, JUnit class) results of a run.
CREATE TABLE history_groups (
    run_id      bigint  NOT NULL REFERENCES history_runs (id) ON DELETE CASCADE,
    group_name  text    NOT NULL,
    status      text,
    duration_ms bigint,
    failed      boolean NOT NULL,
    PRIMARY KEY (run_id, group_name)
);
CREATE INDEX history_groups_group_name_idx ON history_groups (group_name, run_id);

COMMENT ON TABLE history_groups IS 'One row per test group of a run: errorsummary group_result (or listed groups that never finished), JUnit classnames.';
COMMENT ON COLUMN history_groups.run_id IS 'The run (history_runs.id).';
COMMENT ON COLUMN history_groups.group_name IS 'Manifest path (dom/base/test/browser.ini) or JUnit classname.';
COMMENT ON COLUMN history_groups.status IS 'group_result status (OK, ERROR, TIMEOUT, ...), NULL when listed but never finished; for JUnit FAIL or OK.';
COMMENT ON COLUMN history_groups.duration_ms IS 'How long the group ran, NULL when unknown.';
COMMENT ON COLUMN history_groups.failed IS 'The group did not end OK, or one of its tests failed.';

-- Test results of a run: every failure (errorsummary), every testcase (JUnit). One row per
-- test and run: several results of one test (subtests, duplicated testcases) are merged,
-- a failure winning, and the first failure gives the signature.
CREATE TABLE history_tests (
    run_id         bigint  NOT NULL REFERENCES history_runs (id) ON DELETE CASCADE,
    test           text    NOT NULL,
    group_name     text    NOT NULL,
    status         text    NOT NULL,
    expected       text,
    failed         boolean NOT NULL,
    message        text,
    signature      text,
    signature_hash text,
    PRIMARY KEY (run_id, test)
);
CREATE INDEX history_tests_test_idx ON history_tests (test, run_id);
CREATE INDEX history_tests_signature_idx ON history_tests (signature_hash) WHERE failed;
CREATE INDEX history_tests_group_name_idx ON history_tests (group_name, test);

COMMENT ON TABLE history_tests IS 'One row per test and run: errorsummary failures, all JUnit testcases.';
COMMENT ON COLUMN history_tests.run_id IS 'The run (history_runs.id).';
COMMENT ON COLUMN history_tests.test IS 'Test path (browser/.../browser_foo.js), or JUnit classname::name.';
COMMENT ON COLUMN history_tests.group_name IS 'The group the test ran in, "" for a harness-level failure.';
COMMENT ON COLUMN history_tests.status IS 'FAIL, TIMEOUT, CRASH, ERROR, ... for failures; PASS or SKIP for JUnit passes and skips.';
COMMENT ON COLUMN history_tests.expected IS 'The expected status (errorsummary), NULL for JUnit.';
COMMENT ON COLUMN history_tests.failed IS 'True when the result was unexpected (a failure).';
COMMENT ON COLUMN history_tests.message IS 'The failure message (first 2 kB), NULL for passes.';
COMMENT ON COLUMN history_tests.signature IS
    'The normalised failure line "TEST-UNEXPECTED-<STATUS> | <test> | <message>" (common/failure_line.h, the normaliser retrig-decide uses), NULL for passes.';
COMMENT ON COLUMN history_tests.signature_hash IS 'FNV-1a 64 of the signature, 16 hex digits.';

-- Every run of every test: the recorded rows, plus, for runs that record failures only,
-- each run of a group in which a test known to belong to that group (it failed in it
-- once, anywhere in the repository) did not fail.
CREATE VIEW history_test_runs AS
SELECT r.id AS run_id, r.repository, r.project, r.branch, r.branch_class, r.branch_key, r.pr,
       r.push, r.revision, r.run_at, t.test, t.group_name, t.failed, t.signature,
       t.signature_hash
  FROM history_tests t
  JOIN history_runs r ON r.id = t.run_id
UNION ALL
SELECT r.id, r.repository, r.project, r.branch, r.branch_class, r.branch_key, r.pr, r.push,
       r.revision, r.run_at, k.test, g.group_name, false, NULL, NULL
  FROM history_groups g
  JOIN history_runs r ON r.id = g.run_id AND NOT r.complete_results
  JOIN (SELECT DISTINCT kr.repository, kt.group_name, kt.test
          FROM history_tests kt
          JOIN history_runs kr ON kr.id = kt.run_id AND NOT kr.complete_results
         WHERE kt.group_name <> '') k
    ON k.repository = r.repository AND k.group_name = g.group_name
 WHERE NOT EXISTS (SELECT 1 FROM history_tests x WHERE x.run_id = g.run_id AND x.test = k.test);
COMMENT ON VIEW history_test_runs IS
    'One row per run of a test, passes included: recorded results, and for errorsummary runs the runs of the test''s group in which it did not fail.';

-- Per test in [since, until): runs, failures and rate (main branches only when main_only),
-- how widely it failed (distinct pushes, branches, pull requests, and the chance that a
-- push running it saw it fail), when its most frequent failure signature in the window
-- (on any branch) first appeared (any branch, any time), and whether it is flaky before main knows: failed on more than
-- min_branches distinct branches or pull requests within flaky_window, on any branch.
-- Tests listed: those that failed in the window (in scope), and the flaky ones.
-- history_flakes: see sql/functions/30_history_flakes.sql

-- history_group_stats: moved to sql/functions/10_history_group_stats.sql

-- The last 7 days of every repository, all branches, with the default flaky rule (more
-- than 3 branches or pull requests within 7 days).
-- history_flakes_7d: see sql/functions/40_history_flakes_7d.sql

-- The same for the main branches only (runs, failures and rate on main; the flaky flag
-- still looks at every branch).
-- history_flakes_main_7d: see sql/functions/40_history_flakes_main_7d.sql

-- Per test group, the last 7 days, all branches.
-- history_groups_7d: see sql/functions/20_history_groups_7d.sql

-- Failure rate per test and day, for the dashboard's charts.
CREATE VIEW history_test_daily AS
SELECT v.repository, v.test, date_trunc('day', v.run_at) AS day, v.branch_class,
       count(*) AS runs, count(*) FILTER (WHERE v.failed) AS failures
  FROM history_test_runs v
 GROUP BY v.repository, v.test, date_trunc('day', v.run_at), v.branch_class;
COMMENT ON VIEW history_test_daily IS 'Runs and failures per test, UTC day and branch class.';
