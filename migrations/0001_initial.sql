-- SPDX-License-Identifier: MPL-2.0
-- 0001_initial.sql - the tables the pipeline writes and sheriffs read: runs seen,
-- retrigger sets and their members, decisions, and the retrigger budget ledger.
-- Applied by `retrig migrate` inside one transaction; never edit it once applied,
-- add a new numbered file instead. Times are timestamptz (UTC on the wire); the budget
-- day is a UTC date.

-- Every resolved Taskcluster run the classifier has seen (completed, failed, exception),
-- one row per (task, run), written once when first seen.
CREATE TABLE runs (
    task_id         text        NOT NULL,
    run_id          integer     NOT NULL CHECK (run_id >= 0),
    state           text        NOT NULL CHECK (state IN ('completed', 'failed', 'exception')),
    reason_resolved text,
    task_queue_id   text        NOT NULL,
    task_group_id   text        NOT NULL,
    project         text,
    revision        text,
    label           text,
    platform        text,
    scheduled_at    timestamptz,
    started_at      timestamptz,
    resolved_at     timestamptz,
    first_seen_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (task_id, run_id)
);
CREATE INDEX runs_project_revision_idx ON runs (project, revision);
CREATE INDEX runs_label_resolved_at_idx ON runs (label, resolved_at);
CREATE INDEX runs_task_group_id_idx ON runs (task_group_id);

COMMENT ON TABLE runs IS
    'Every resolved Taskcluster run retrig has seen (from Pulse task-completed/failed/exception), one row per task and run.';
COMMENT ON COLUMN runs.task_id IS 'Taskcluster task id (slugid).';
COMMENT ON COLUMN runs.run_id IS 'Taskcluster run number within the task, from 0.';
COMMENT ON COLUMN runs.state IS 'Run state when resolved: completed, failed or exception.';
COMMENT ON COLUMN runs.reason_resolved IS
    'Taskcluster reasonResolved: completed, failed, deadline-exceeded, canceled, superseded, claim-expired, worker-shutdown, malformed-payload, resource-unavailable, internal-error, intermittent-task.';
COMMENT ON COLUMN runs.task_queue_id IS 'Worker pool, provisionerId/workerType (e.g. gecko-t/t-linux-large).';
COMMENT ON COLUMN runs.task_group_id IS 'Task group (the decision task of the push).';
COMMENT ON COLUMN runs.project IS 'Treeherder project (repository), e.g. autoland; NULL when unknown.';
COMMENT ON COLUMN runs.revision IS 'Push head revision (40 hex digits); NULL when unknown.';
COMMENT ON COLUMN runs.label IS 'Task label, e.g. test-linux1804-64/opt-mochitest-browser-chrome-1; NULL when unknown.';
COMMENT ON COLUMN runs.platform IS 'Treeherder machine platform, e.g. linux1804-64; NULL when unknown.';
COMMENT ON COLUMN runs.scheduled_at IS 'When Taskcluster scheduled the run.';
COMMENT ON COLUMN runs.started_at IS 'When a worker started the run.';
COMMENT ON COLUMN runs.resolved_at IS 'When the run resolved.';
COMMENT ON COLUMN runs.first_seen_at IS 'When retrig first recorded the run.';

-- One retrigger set per failing (project, revision, label): the original failed run plus
-- the retriggers asked for it. The UNIQUE constraint is the backstop for Redis dedupe:
-- a redelivered or duplicated message can never create a second set.
CREATE TABLE retrigger_sets (
    id                bigserial   PRIMARY KEY,
    project           text        NOT NULL,
    revision          text        NOT NULL,
    label             text        NOT NULL,
    platform          text        NOT NULL,
    original_task_id  text        NOT NULL,
    original_run_id   integer     NOT NULL CHECK (original_run_id >= 0),
    retrigger_count   integer     NOT NULL CHECK (retrigger_count > 0),
    status            text        NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'requested', 'complete', 'decided', 'failed')),
    action_task_id    text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT retrigger_sets_project_revision_label_key UNIQUE (project, revision, label)
);
CREATE INDEX retrigger_sets_open_idx ON retrigger_sets (status, created_at)
    WHERE status IN ('pending', 'requested', 'complete');
CREATE INDEX retrigger_sets_original_idx ON retrigger_sets (original_task_id, original_run_id);

COMMENT ON TABLE retrigger_sets IS
    'A failing test task on one push and the retriggers requested to judge it; at most one per project, revision and label.';
COMMENT ON COLUMN retrigger_sets.project IS 'Treeherder project (repository), e.g. autoland.';
COMMENT ON COLUMN retrigger_sets.revision IS 'Push head revision.';
COMMENT ON COLUMN retrigger_sets.label IS 'Task label of the failing task.';
COMMENT ON COLUMN retrigger_sets.platform IS 'Treeherder machine platform; budgets are per platform.';
COMMENT ON COLUMN retrigger_sets.original_task_id IS 'Task id of the failed run that started the set.';
COMMENT ON COLUMN retrigger_sets.original_run_id IS 'Run number of the failed run that started the set.';
COMMENT ON COLUMN retrigger_sets.retrigger_count IS 'How many retriggers were asked for.';
COMMENT ON COLUMN retrigger_sets.status IS
    'pending: retrigger not sent yet; requested: the retrigger action was created; complete: every member resolved; decided: a decision row exists; failed: the retrigger could not be requested.';
COMMENT ON COLUMN retrigger_sets.action_task_id IS 'Task id of the Taskcluster retrigger action task; NULL until requested (and in dry-run).';
COMMENT ON COLUMN retrigger_sets.created_at IS 'When the set was created.';
COMMENT ON COLUMN retrigger_sets.updated_at IS 'When status last changed.';

-- The runs that belong to a set: the original and each retrigger, with their outcome.
CREATE TABLE retrigger_set_members (
    set_id      bigint      NOT NULL REFERENCES retrigger_sets (id) ON DELETE CASCADE,
    task_id     text        NOT NULL,
    run_id      integer     NOT NULL CHECK (run_id >= 0),
    role        text        NOT NULL CHECK (role IN ('original', 'retrigger')),
    state       text        NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'running', 'completed', 'failed', 'exception')),
    result      text,
    added_at    timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    CONSTRAINT retrigger_set_members_set_task_run_key UNIQUE (set_id, task_id, run_id)
);
CREATE INDEX retrigger_set_members_task_run_idx ON retrigger_set_members (task_id, run_id);

COMMENT ON TABLE retrigger_set_members IS
    'The runs of a retrigger set: the original failed run and the retriggered runs.';
COMMENT ON COLUMN retrigger_set_members.role IS 'original: the failed run that started the set; retrigger: a run requested by retrig.';
COMMENT ON COLUMN retrigger_set_members.state IS 'Taskcluster run state: pending and running until resolved, then completed, failed or exception.';
COMMENT ON COLUMN retrigger_set_members.result IS
    'What the decider concluded for this run, e.g. passed, same-failure, other-failure, infra; NULL until examined.';
COMMENT ON COLUMN retrigger_set_members.added_at IS 'When the run was attached to the set.';
COMMENT ON COLUMN retrigger_set_members.resolved_at IS 'When the run resolved; NULL while pending or running.';

-- The verdict on a set: what sheriffs read. One per set.
CREATE TABLE decisions (
    set_id                  bigint      PRIMARY KEY REFERENCES retrigger_sets (id) ON DELETE CASCADE,
    verdict                 text        NOT NULL
                            CHECK (verdict IN ('regression', 'intermittent', 'infra', 'undecided')),
    reason                  text        NOT NULL,
    evidence                jsonb       NOT NULL DEFAULT '{}'::jsonb,
    classification_id       integer,
    failure_seen_at         timestamptz NOT NULL,
    retriggers_requested_at timestamptz,
    decided_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX decisions_decided_at_idx ON decisions (decided_at);
CREATE INDEX decisions_verdict_decided_at_idx ON decisions (verdict, decided_at);

COMMENT ON TABLE decisions IS 'The verdict retrig reached for a retrigger set, with the evidence for it.';
COMMENT ON COLUMN decisions.verdict IS
    'regression: the failure reproduces in the retriggers; intermittent: it does not; infra: the failure was an infrastructure problem; undecided: retrig could not tell (reason says why).';
COMMENT ON COLUMN decisions.reason IS 'One human sentence explaining the verdict.';
COMMENT ON COLUMN decisions.evidence IS
    'JSON with what the verdict rests on: failure lines of the original and of each retrigger, Treeherder job ids, counts.';
COMMENT ON COLUMN decisions.classification_id IS
    'Treeherder failure_classification_id of the original job when decided (1 not classified, 4 intermittent, ...); NULL when unknown.';
COMMENT ON COLUMN decisions.failure_seen_at IS 'When retrig saw the original failure.';
COMMENT ON COLUMN decisions.retriggers_requested_at IS 'When the retriggers were requested; NULL when none were (infra, undecided).';
COMMENT ON COLUMN decisions.decided_at IS 'When the verdict was written.';

-- Every retrigger or backfill spent against a platform's daily budget. Redis holds the
-- fast atomic counters; this ledger is the durable record, and idempotency_key makes a
-- second spend for the same thing impossible.
CREATE TABLE budget_ledger (
    id              bigserial   PRIMARY KEY,
    platform        text        NOT NULL,
    day             date        NOT NULL,
    amount          integer     NOT NULL CHECK (amount > 0),
    idempotency_key text        NOT NULL,
    set_id          bigint      REFERENCES retrigger_sets (id) ON DELETE SET NULL,
    reason          text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT budget_ledger_idempotency_key_key UNIQUE (idempotency_key)
);
CREATE INDEX budget_ledger_platform_day_idx ON budget_ledger (platform, day);
CREATE INDEX budget_ledger_set_id_idx ON budget_ledger (set_id) WHERE set_id IS NOT NULL;

COMMENT ON TABLE budget_ledger IS 'Retriggers and backfills spent against per-platform daily budgets.';
COMMENT ON COLUMN budget_ledger.platform IS 'Treeherder machine platform the budget belongs to.';
COMMENT ON COLUMN budget_ledger.day IS 'The UTC day the spend counts against.';
COMMENT ON COLUMN budget_ledger.amount IS 'Number of task runs spent (positive).';
COMMENT ON COLUMN budget_ledger.idempotency_key IS
    'What was paid for, unique: "set:<retrigger_sets.id>" for a retrigger set, "perf-alert:<alert id>" for a performance backfill.';
COMMENT ON COLUMN budget_ledger.set_id IS 'The retrigger set paid for; NULL for performance backfills.';
COMMENT ON COLUMN budget_ledger.reason IS 'Why the budget was spent, for humans.';
COMMENT ON COLUMN budget_ledger.created_at IS 'When the spend was recorded.';

-- Sets with their verdict, for sheriffs who do not want to write the join.
CREATE VIEW decision_overview AS
SELECT s.id AS set_id, s.project, s.revision, s.label, s.platform,
       s.original_task_id, s.original_run_id, s.retrigger_count, s.status,
       d.verdict, d.reason, d.classification_id, d.failure_seen_at, d.decided_at
  FROM retrigger_sets s
  LEFT JOIN decisions d ON d.set_id = s.id;
COMMENT ON VIEW decision_overview IS 'Each retrigger set with its verdict (NULL while undecided).';

-- The read-only role sheriffs and dashboards use. Roles are cluster-wide and several
-- databases may be migrated at once, so creating it tolerates a concurrent creation.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'retrig_sheriff') THEN
        BEGIN
            CREATE ROLE retrig_sheriff NOLOGIN;
            COMMENT ON ROLE retrig_sheriff IS
                'Read-only access to retrig''s tables; grant it to the login roles of sheriffs.';
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL; -- created meanwhile by a migrator of another database
        END;
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO retrig_sheriff;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO retrig_sheriff;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO retrig_sheriff;
