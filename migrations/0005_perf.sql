-- SPDX-License-Identifier: MPL-2.0
-- 0005_perf.sql - retrig-perf's record of the Perfherder alerts it backfilled and the
-- alert summaries it is done with. A backfill's intent is written (with its budget ledger
-- entry, in one transaction) before the hook is called, so a crash or a second runner
-- looks the action task up instead of calling twice; the primary keys are the backstop.

CREATE TABLE perf_summaries (
    summary_id    bigint      PRIMARY KEY,
    repository    text        NOT NULL,
    framework_id  integer     NOT NULL,
    push_id       bigint,
    revision      text,
    created_at    timestamptz,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    handled_at    timestamptz
);
CREATE INDEX perf_summaries_open_idx ON perf_summaries (first_seen_at) WHERE handled_at IS NULL;

COMMENT ON TABLE perf_summaries IS
    'Perfherder alert summaries retrig-perf has acted on; handled_at set once nothing more will be taken from it.';
COMMENT ON COLUMN perf_summaries.summary_id IS 'Perfherder alert summary id.';
COMMENT ON COLUMN perf_summaries.repository IS 'Repository (Treeherder project) of the summary, e.g. autoland.';
COMMENT ON COLUMN perf_summaries.framework_id IS 'Perfherder framework id (1 talos, 4 awsy, 13 browsertime, ...).';
COMMENT ON COLUMN perf_summaries.push_id IS 'Treeherder push id of the summary''s push.';
COMMENT ON COLUMN perf_summaries.revision IS 'Head revision of the summary''s push.';
COMMENT ON COLUMN perf_summaries.created_at IS 'When Perfherder created the summary (UTC).';
COMMENT ON COLUMN perf_summaries.first_seen_at IS 'When retrig-perf first recorded the summary.';
COMMENT ON COLUMN perf_summaries.handled_at IS
    'When the summary was done: max_per_summary alerts taken, or no alert left worth a backfill; NULL while alerts may still be taken (e.g. their family was out of budget).';

CREATE TABLE perf_alerts (
    alert_id         bigint      PRIMARY KEY,
    summary_id       bigint      NOT NULL REFERENCES perf_summaries (summary_id) ON DELETE CASCADE,
    signature_id     bigint      NOT NULL,
    platform         text        NOT NULL,
    family           text        NOT NULL,
    is_regression    boolean     NOT NULL,
    amount_pct       double precision NOT NULL,
    job_id           bigint,
    task_id          text,
    decision_task_id text,
    action_name      text        NOT NULL DEFAULT 'backfill',
    hook_group_id    text,
    hook_id          text,
    payload          jsonb,
    jobs_scheduled   integer     NOT NULL DEFAULT 0 CHECK (jobs_scheduled >= 0),
    budget_day       date,
    dry_run          boolean     NOT NULL,
    intent_at        timestamptz NOT NULL DEFAULT now(),
    attempts         integer     NOT NULL DEFAULT 0,
    outcome          text        CHECK (outcome IN ('triggered', 'dry-run', 'found-existing',
                                                    'already-backfilled', 'no-job',
                                                    'no-backfill-action', 'failed')),
    action_task_id   text,
    error            text,
    finished_at      timestamptz
);
CREATE INDEX perf_alerts_summary_idx ON perf_alerts (summary_id);
CREATE INDEX perf_alerts_open_idx ON perf_alerts (intent_at) WHERE outcome IS NULL;
CREATE INDEX perf_alerts_day_family_idx ON perf_alerts (budget_day, family);

COMMENT ON TABLE perf_alerts IS
    'Each Perfherder alert retrig-perf took: the backfill it asked for (intent first, outcome after) or why it asked for none.';
COMMENT ON COLUMN perf_alerts.alert_id IS 'Perfherder alert id.';
COMMENT ON COLUMN perf_alerts.summary_id IS 'The alert summary the alert belongs to.';
COMMENT ON COLUMN perf_alerts.signature_id IS 'Perfherder series signature id of the alert.';
COMMENT ON COLUMN perf_alerts.platform IS 'machine_platform of the alert''s series, e.g. windows10-64-shippable-qr.';
COMMENT ON COLUMN perf_alerts.family IS 'Platform family the budget was taken from (perf_platform_families), or other.';
COMMENT ON COLUMN perf_alerts.is_regression IS 'True for a regression, false for an improvement.';
COMMENT ON COLUMN perf_alerts.amount_pct IS 'Magnitude of the change in percent, as Perfherder reports it.';
COMMENT ON COLUMN perf_alerts.job_id IS 'Treeherder job that produced the alert''s data point at the summary''s push.';
COMMENT ON COLUMN perf_alerts.task_id IS 'Taskcluster task of that job: the task backfilled.';
COMMENT ON COLUMN perf_alerts.decision_task_id IS 'The push''s decision task, whose actions.json was used.';
COMMENT ON COLUMN perf_alerts.action_name IS 'The actions.json action used (backfill).';
COMMENT ON COLUMN perf_alerts.hook_group_id IS 'Taskcluster hook group of the action.';
COMMENT ON COLUMN perf_alerts.hook_id IS 'Taskcluster hook id of the action.';
COMMENT ON COLUMN perf_alerts.payload IS 'The rendered hook payload that was (or in dry-run would have been) sent.';
COMMENT ON COLUMN perf_alerts.jobs_scheduled IS 'Jobs the backfill schedules (depth x times): what it cost the family''s budget; 0 when nothing was asked.';
COMMENT ON COLUMN perf_alerts.budget_day IS 'UTC day whose budget paid for the backfill; NULL when nothing was spent.';
COMMENT ON COLUMN perf_alerts.dry_run IS 'True when Taskcluster was not called (dry_run configuration).';
COMMENT ON COLUMN perf_alerts.intent_at IS 'When the intent was recorded; moved to the start of each hook call.';
COMMENT ON COLUMN perf_alerts.attempts IS 'How many times the hook was called for this alert.';
COMMENT ON COLUMN perf_alerts.outcome IS
    'triggered: the backfill action task was created; dry-run: not sent; found-existing: an interrupted call had created it; already-backfilled: a backfill of the job existed before (by hand or another tool); no-job: Perfherder has no data point of the alert''s series at its push; no-backfill-action: actions.json has no usable backfill action; failed: see error. NULL while in flight.';
COMMENT ON COLUMN perf_alerts.action_task_id IS 'Task id of the backfill action task (ours, or the existing one).';
COMMENT ON COLUMN perf_alerts.error IS 'Why the last attempt failed, or details of the outcome.';
COMMENT ON COLUMN perf_alerts.finished_at IS 'When the outcome was recorded.';

COMMENT ON COLUMN budget_ledger.idempotency_key IS
    'What was paid for, unique: "set:<retrigger_sets.id>" for a retrigger set, "refund:set:<id>" for its refund, "perf-alert:<alert id>" for a performance backfill (platform is then "perf:<family>").';

GRANT SELECT ON perf_summaries, perf_alerts TO retrig_sheriff;
