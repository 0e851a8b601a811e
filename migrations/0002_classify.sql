-- SPDX-License-Identifier: MPL-2.0
-- 0002_classify.sql - what retrig-classify decided for each run, and what a retrigger
-- set asked for: the failures kept for the decision and whether its request went out.

ALTER TABLE runs
    ADD COLUMN verdict        text CHECK (verdict IN ('retrigger', 'skip', 'infra')),
    ADD COLUMN verdict_reason text,
    ADD COLUMN classified_at  timestamptz;
COMMENT ON COLUMN runs.verdict IS
    'What retrig-classify decided for this run: retrigger, skip or infra; NULL until classified.';
COMMENT ON COLUMN runs.verdict_reason IS
    'The reason code of the verdict: not-failed, exception, not-test, tier, is-retrigger, duplicate, pool, classified, no-errorsummary, incomplete-errorsummary, no-test-failure, enough-runs, budget-exhausted, eligible.';
COMMENT ON COLUMN runs.classified_at IS 'When retrig-classify reached the verdict.';
CREATE INDEX runs_verdict_idx ON runs (verdict, verdict_reason) WHERE verdict IS NOT NULL;

ALTER TABLE retrigger_sets
    ADD COLUMN failing_groups       jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN failures             jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN task_group_id        text,
    ADD COLUMN task_queue_id        text,
    ADD COLUMN request_published_at timestamptz;
COMMENT ON COLUMN retrigger_sets.failing_groups IS 'Test groups that failed in the original run (from its errorsummary).';
COMMENT ON COLUMN retrigger_sets.failures IS
    'Failing test results of the original run: [{test, subtest, status, expected, message, group}].';
COMMENT ON COLUMN retrigger_sets.task_group_id IS 'Task group of the original task (the push''s decision task).';
COMMENT ON COLUMN retrigger_sets.task_queue_id IS 'Worker pool of the original task.';
COMMENT ON COLUMN retrigger_sets.request_published_at IS
    'When the retrigger request was confirmed by the broker; NULL means it still has to be sent.';
