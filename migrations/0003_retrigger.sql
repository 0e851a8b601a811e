-- SPDX-License-Identifier: MPL-2.0
-- 0003_retrigger.sql - retrig-retrigger's record of each Taskcluster action it triggers:
-- the intent is written before the hook is called, so a crash or a redelivery looks the
-- action task up instead of calling twice. Budget refunds are ledger rows with a negative
-- amount, so the ledger's sum per platform and day is what was really spent.

CREATE TABLE retrigger_actions (
    set_id           bigint      PRIMARY KEY REFERENCES retrigger_sets (id) ON DELETE CASCADE,
    action_name      text        NOT NULL,
    decision_task_id text        NOT NULL,
    hook_group_id    text,
    hook_id          text,
    payload          jsonb,
    dry_run          boolean     NOT NULL,
    intent_at        timestamptz NOT NULL DEFAULT now(),
    attempts         integer     NOT NULL DEFAULT 0,
    outcome          text        CHECK (outcome IN ('triggered', 'dry-run', 'found-existing',
                                                    'classified-before-trigger',
                                                    'no-retrigger-action', 'failed')),
    action_task_id   text,
    error            text,
    finished_at      timestamptz
);
CREATE INDEX retrigger_actions_open_idx ON retrigger_actions (intent_at) WHERE outcome IS NULL;

COMMENT ON TABLE retrigger_actions IS
    'Each retrigger action retrig-retrigger asked Taskcluster for: intent first, outcome after.';
COMMENT ON COLUMN retrigger_actions.action_name IS 'The action of actions.json used, e.g. retrigger-multiple.';
COMMENT ON COLUMN retrigger_actions.decision_task_id IS 'The push''s decision task, whose actions.json was used.';
COMMENT ON COLUMN retrigger_actions.hook_group_id IS 'Taskcluster hook group of the action (e.g. project-gecko).';
COMMENT ON COLUMN retrigger_actions.hook_id IS 'Taskcluster hook id of the action.';
COMMENT ON COLUMN retrigger_actions.payload IS 'The rendered hook payload that was (or in dry-run would have been) sent.';
COMMENT ON COLUMN retrigger_actions.dry_run IS 'True when Taskcluster was not called (dry_run configuration).';
COMMENT ON COLUMN retrigger_actions.intent_at IS
    'When the intent was recorded, before calling Taskcluster; moved to the start of each later call, so a redelivery waits until that call is over before looking for its action task.';
COMMENT ON COLUMN retrigger_actions.attempts IS 'How many times the hook was called for this set (1 when all went well).';
COMMENT ON COLUMN retrigger_actions.outcome IS
    'triggered: the hook created the action task; dry-run: not sent; found-existing: an earlier call had created it; classified-before-trigger: a sheriff classified the failure first; no-retrigger-action: actions.json has no usable action; failed: see error. NULL while in flight.';
COMMENT ON COLUMN retrigger_actions.action_task_id IS 'Task id of the action task Taskcluster created.';
COMMENT ON COLUMN retrigger_actions.error IS 'Why the action could not be triggered, for failed.';
COMMENT ON COLUMN retrigger_actions.finished_at IS 'When the outcome was recorded.';

ALTER TABLE budget_ledger DROP CONSTRAINT budget_ledger_amount_check;
ALTER TABLE budget_ledger ADD CONSTRAINT budget_ledger_amount_check CHECK (amount <> 0);
COMMENT ON COLUMN budget_ledger.amount IS
    'Number of task runs spent; negative for a refund (idempotency key "refund:set:<id>").';

GRANT SELECT ON retrigger_actions TO retrig_sheriff;
