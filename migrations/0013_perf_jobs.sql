-- SPDX-License-Identifier: MPL-2.0
-- 0013_perf_jobs.sql - retrig-perf counts jobs, not alerts: alerts of one summary from the
-- same job (the subtests of one suite on one platform) are one backfill. Each alert row
-- records its job's key; an alert whose job another alert's backfill covers is recorded
-- with outcome 'covered' (and the alert that covers it), costing no budget and not counted
-- against perf_max_per_summary.

ALTER TABLE perf_alerts ADD COLUMN job_key text;
ALTER TABLE perf_alerts ADD COLUMN covered_by bigint;
ALTER TABLE perf_alerts DROP CONSTRAINT perf_alerts_outcome_check;
ALTER TABLE perf_alerts ADD CONSTRAINT perf_alerts_outcome_check
    CHECK (outcome IN ('triggered', 'dry-run', 'found-existing', 'already-backfilled', 'no-job',
                       'no-backfill-action', 'failed', 'covered'));
CREATE INDEX perf_alerts_summary_job_idx ON perf_alerts (summary_id, job_key);

COMMENT ON COLUMN perf_alerts.job_key IS
    'The job the alert''s data comes from within its summary''s push: platform|suite|option collection hash|extra options. Alerts with the same key are one backfill.';
COMMENT ON COLUMN perf_alerts.covered_by IS
    'For outcome covered: the alert of the same summary and job whose backfill covers this one (NULL when an earlier run backfilled the job).';
