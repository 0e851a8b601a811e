-- SPDX-License-Identifier: MPL-2.0
-- 0037_history_outcome_labels.sql (issue 31): retrig flakes, the flaky-test page and the
-- flaky-test issues label the JUnit outcomes that are no plain pass, skip or failure
-- (FLAKY, DISABLED, COLLECTION_ERROR, BUILD_FAILED: migration 0034) per test of a window
-- (common/store/outcomes.c). They are rare among the outcomes: a partial index finds them
-- without reading the window's every outcome.
CREATE INDEX history_tests_labelled_idx ON history_tests (run_at, run_id)
    WHERE status IN ('FLAKY', 'DISABLED', 'COLLECTION_ERROR', 'BUILD_FAILED');
