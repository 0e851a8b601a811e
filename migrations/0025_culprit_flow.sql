-- SPDX-License-Identifier: MPL-2.0
-- 0025_culprit_flow.sql - what the culprit search of retrig-decide (workers/decide/culprit_flow.c)
-- and the add-new-jobs path of retrig-retrigger (workers/retrigger/main.c) keep beside
-- migration 0015: the search's window of pushes with what each showed, when a worker last
-- looked at it, the Treeherder link of the culprit; and, per probe request, the hook called,
-- the calls made for its current attempt and the action tasks of its earlier attempts, so that
-- an interrupted call is looked up (and never repeated) without mistaking an earlier
-- attempt's action task for it.

ALTER TABLE decisions
    ADD COLUMN culprit_window     jsonb CHECK (culprit_window IS NULL
                                               OR jsonb_typeof(culprit_window) = 'object'),
    ADD COLUMN culprit_url        text,
    ADD COLUMN culprit_checked_at timestamptz;

COMMENT ON COLUMN decisions.culprit_window IS
    'The culprit search''s window (common/core/culprit_flow.h), found once from Treeherder''s push list and kept up to date: {"failing_push_id", "pushes": [{"revision", "push_id", "author", "runs", "reproduced", "pending", "base_jobs", "asked", "attempts", "jobs": {"<Treeherder job id>": "passed"|"reproduced"|"other"|"none"}, "request": {"attempt", "times", "round", "confirm", "at"}}], "rounds", "lines": [failure line signatures the runs are compared with]}, oldest push first: the window''s first push, the pushes where the label did not run, the failing push last. NULL until found.';
COMMENT ON COLUMN decisions.culprit_url IS
    'Treeherder link of the culprit push (<treeherder_url>/jobs?repo=<project>&revision=<culprit_revision>); set with culprit_revision.';
COMMENT ON COLUMN decisions.culprit_checked_at IS
    'When a retrig-decide last looked at the search (every culprit_poll_interval_s while it is searching); NULL before the first look.';

ALTER TABLE culprit_pending_probes
    ADD COLUMN hook_group_id            text,
    ADD COLUMN hook_id                  text,
    ADD COLUMN calls                    integer NOT NULL DEFAULT 0 CHECK (calls >= 0),
    ADD COLUMN previous_action_task_ids text[]  NOT NULL DEFAULT '{}';

COMMENT ON COLUMN culprit_pending_probes.hook_group_id IS 'Taskcluster hook group of the add-new-jobs action called (project-gecko).';
COMMENT ON COLUMN culprit_pending_probes.hook_id IS 'Taskcluster hook id of the add-new-jobs action called (in-tree-action-<level>-generic/<hash>).';
COMMENT ON COLUMN culprit_pending_probes.calls IS
    'Hook calls made for the current attempt (1 when all went well); intent_at moves to the start of each, so a redelivery waits until that call is over before looking for its action task.';
COMMENT ON COLUMN culprit_pending_probes.previous_action_task_ids IS
    'Action tasks of the earlier attempts on this push, oldest first: the look-up of an interrupted call skips them.';

CREATE INDEX decisions_culprit_checked_idx ON decisions (culprit_checked_at)
    WHERE culprit_status = 'searching';
