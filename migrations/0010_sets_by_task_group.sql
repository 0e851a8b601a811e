-- SPDX-License-Identifier: MPL-2.0
-- 0010_sets_by_task_group.sql - retrigger sets found by their task group.
-- retrig-classify writes each batch of completed and exception runs in one statement that
-- also picks out the runs that may belong to a retrigger set, which the full path then
-- records as members: those naming a push and label with a set (the unique key), and those
-- naming neither whose task group has a set (this index). Before, the task group check
-- asked Redis (a mark set with each set), which a flushed Redis answered "no".
CREATE INDEX retrigger_sets_task_group_id_idx ON retrigger_sets (task_group_id);
