-- SPDX-License-Identifier: MPL-2.0
-- 0042_pooled_set_tasks.sql - what ends a pooled set's settle window early (issue 32): the
-- push's tasks that may run the failing test's group on the other configurations.
--
-- When a failing task joins its pooled set, retrig-classify lists the push's task group and
-- records the tasks of the task's label family (its label after the build type, the chunk
-- number dropped: common/core/decide_pool.h, rt_pool_label_family), whatever their state.
-- retrig-decide ends the settle window before settle_until once each of them has finished
-- (its run is in the test history, history_runs.run_key "<taskId>/<runId>", or it was
-- listed as ended in an exception) or runs on a configuration whose result of the group is
-- known already (rt_pool_settle_done). A pooled set without tasks waits for settle_until.

CREATE TABLE pooled_set_tasks (
    pool_id  bigint NOT NULL REFERENCES pooled_sets (id) ON DELETE CASCADE,
    task_id  text   NOT NULL,
    label    text   NOT NULL,
    config   text   NOT NULL,
    state    text   NOT NULL,
    PRIMARY KEY (pool_id, task_id)
);

COMMENT ON TABLE pooled_set_tasks IS
    'The push''s tasks of a pooled set''s member label families: the settle window ends when each has finished or its configuration''s result is known.';
COMMENT ON COLUMN pooled_set_tasks.config IS 'Its configuration (rt_pool_config_name: platform and build type).';
COMMENT ON COLUMN pooled_set_tasks.state IS
    'Its latest run''s state when the task group was listed (unscheduled, pending, running, completed, failed, exception).';
