-- SPDX-License-Identifier: MPL-2.0
-- 0007_perf_followup.sql - retrig-perf's follow-up of the backfills it triggered: the
-- action task's fate and that of the jobs it spawned, so failures are left for manual work
-- with a reason and `retrig perf-report` can count the jobs a backfill really ran.
--
-- Spawned jobs: the tasks of the action task's task group (the alert push's decision task
-- group) whose extra.parent (set by gecko's action code on every task an action creates)
-- or tags.created-by is the action task id.

ALTER TABLE perf_alerts
    ADD COLUMN followup_state      text CHECK (followup_state IN ('pending', 'done', 'failed')),
    ADD COLUMN followup_reason     text CHECK (followup_reason IN ('action-failed', 'jobs-failed',
                                                                   'jobs-exception',
                                                                   'deadline-exceeded', 'no-data')),
    ADD COLUMN followup_detail     text,
    ADD COLUMN followup_jobs       integer NOT NULL DEFAULT 0 CHECK (followup_jobs >= 0),
    ADD COLUMN followup_completed  integer NOT NULL DEFAULT 0 CHECK (followup_completed >= 0),
    ADD COLUMN followup_checked_at timestamptz,
    ADD COLUMN followup_settled_at timestamptz,
    ADD CONSTRAINT perf_alerts_followup_reason_check2
        CHECK ((followup_state = 'failed') = (followup_reason IS NOT NULL));

-- Backfills with an action task get followed from now on; older ones too.
UPDATE perf_alerts SET followup_state = 'pending'
    WHERE outcome IN ('triggered', 'found-existing') AND action_task_id IS NOT NULL AND NOT dry_run;

CREATE INDEX perf_alerts_followup_idx ON perf_alerts (finished_at) WHERE followup_state = 'pending';

COMMENT ON COLUMN perf_alerts.followup_state IS
    'pending: the backfill (action task, then its jobs) is not settled yet; done: every spawned job completed and Perfherder has data from at least one; failed: see followup_reason. NULL: nothing to follow (no backfill sent by us).';
COMMENT ON COLUMN perf_alerts.followup_reason IS
    'Why a followed backfill needs manual work: action-failed (the action task failed, or ended in an exception other than deadline-exceeded), jobs-failed (a spawned job failed), jobs-exception (a spawned job ended in an exception), deadline-exceeded (a task''s deadline passed, or nothing settled within perf_followup_window_hours), no-data (the action spawned no job, or its jobs completed without a Perfherder data point of the alert''s series).';
COMMENT ON COLUMN perf_alerts.followup_detail IS 'Which task, state or count led to the follow-up state.';
COMMENT ON COLUMN perf_alerts.followup_jobs IS 'Jobs the action task spawned (as last seen).';
COMMENT ON COLUMN perf_alerts.followup_completed IS 'Spawned jobs that completed successfully: jobs executed as backfill.';
COMMENT ON COLUMN perf_alerts.followup_checked_at IS 'When the follow-up last looked at Taskcluster.';
COMMENT ON COLUMN perf_alerts.followup_settled_at IS 'When the follow-up state became done or failed.';
