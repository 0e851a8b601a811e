-- SPDX-License-Identifier: MPL-2.0
-- 0023_refused_hook.sql - the outcome refused-hook of a hook call retrig refused to sign.
-- A push writes its own actions.json; retrig-retrigger and
-- retrig-perf sign a hook call only when it is one retrig may make (common/core/trust.h:
-- the configured hook group, an in-tree-action hook of the task's level, the task's own
-- scheduler, task group and push). A call refused is recorded with this outcome, and its
-- reason in error, and is never sent.
ALTER TABLE retrigger_actions DROP CONSTRAINT retrigger_actions_outcome_check;
ALTER TABLE retrigger_actions ADD CONSTRAINT retrigger_actions_outcome_check
    CHECK (outcome IN ('triggered', 'dry-run', 'found-existing', 'classified-before-trigger',
                       'no-retrigger-action', 'refused-hook', 'failed'));
COMMENT ON COLUMN retrigger_actions.outcome IS
    'triggered: the hook created the action task; dry-run: not sent; found-existing: an earlier call had created it; classified-before-trigger: a sheriff classified the failure first; no-retrigger-action: actions.json has no usable action; refused-hook: actions.json asked for a hook call retrig may not make (see error), not sent; failed: see error. NULL while in flight.';

ALTER TABLE perf_alerts DROP CONSTRAINT perf_alerts_outcome_check;
ALTER TABLE perf_alerts ADD CONSTRAINT perf_alerts_outcome_check
    CHECK (outcome IN ('triggered', 'dry-run', 'found-existing', 'already-backfilled', 'no-job',
                       'no-backfill-action', 'covered', 'refused-hook', 'failed'));
COMMENT ON COLUMN perf_alerts.outcome IS
    'triggered: the backfill action task was created; dry-run: not sent; found-existing: an interrupted call had created it; already-backfilled: a backfill of the job existed before (by hand or another tool); no-job: Perfherder has no data point of the alert''s series at its push; no-backfill-action: actions.json has no usable backfill action; covered: another alert''s backfill of the same job covers it (covered_by, migration 0013); refused-hook: actions.json asked for a hook call retrig may not make (see error), not sent; failed: see error. NULL while in flight.';
