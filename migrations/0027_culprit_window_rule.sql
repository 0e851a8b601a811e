-- SPDX-License-Identifier: MPL-2.0
-- 0027_culprit_window_rule.sql - the culprit search's window also records the history of the
-- regression's test the probes were planned with ("history", since retrig-decide reads it)
-- and the rule that classified the probed pushes ("probe_rule": seed, or adaptive under
-- decide_policy = adaptive: common/core/culprit_adaptive.h). Only the column's description
-- changes.
COMMENT ON COLUMN decisions.culprit_window IS
    'The culprit search''s window (common/core/culprit_flow.h), found once from Treeherder''s push list and kept up to date: {"failing_push_id", "pushes": [{"revision", "push_id", "author", "runs", "reproduced", "pending", "base_jobs", "asked", "attempts", "jobs": {"<Treeherder job id>": "passed"|"reproduced"|"other"|"none"}, "request": {"attempt", "times", "round", "confirm", "at"}}], "rounds", "lines": [failure line signatures the runs are compared with], "history": {"runs", "failures"} (the regression''s test on other pushes before the failure), "probe_rule": "seed"|"adaptive"}, oldest push first: the window''s first push, the pushes where the label did not run, the failing push last. NULL until found.';
