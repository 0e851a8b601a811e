-- SPDX-License-Identifier: MPL-2.0
-- 0030_history_coverage_rollup.sql - what the test history rests on (retrig report's
-- coverage: runs, pushes, branches and pull requests per window, day and project, and the
-- stretches with no run) from a rollup of the runs (issue 23). Those four reads went over
-- every run of the window in history_runs: at Firefox's volume (tens of thousands of test
-- tasks a day) they cost what the runs cost, over a second each at bench_history's 5 million
-- outcomes and ten times that at 50 million. They are now functions that read, for a window
-- of whole UTC days, two small tables kept by history_rollup_apply with the rest of the
-- rollup:
--   history_rollup_run_days   repository x day x project x branch class x source: runs,
--                             failures-only runs, first and last run, and the day's distinct
--                             pushes, branch keys and pull requests (a day has hundreds of
--                             pushes, not tens of thousands of runs), so that distinct counts
--                             over days stay exact;
--   history_rollup_run_hours  repository x UTC hour: its first and last run. A stretch with no
--                             run of at least an hour starts at the last run of one hour and
--                             ends at the first run of the next hour that has one, so the gaps
--                             the coverage reports (at least 6 hours) are exact from these.
-- Other windows, and gaps shorter than an hour, read the raw runs as before. Each function
-- takes p_rollup: NULL chooses, true or false forces one side (tests/integration/
-- test_history_rollup.c checks that both give the same rows).

CREATE TABLE history_rollup_run_days (
    repository         text        NOT NULL,
    day                date        NOT NULL,
    project            text        NOT NULL,
    branch_class       text        NOT NULL,
    source             text        NOT NULL,
    runs               bigint      NOT NULL,
    failures_only_runs bigint      NOT NULL,
    first_run          timestamptz NOT NULL,
    last_run           timestamptz NOT NULL,
    pushes             text[]      NOT NULL,
    branch_keys        text[]      NOT NULL,
    prs                integer[]   NOT NULL,
    PRIMARY KEY (repository, day, project, branch_class, source)
);
COMMENT ON TABLE history_rollup_run_days IS 'Test history runs per UTC day, project, branch class and source, with the day''s distinct pushes, branch keys and pull requests (retrig report''s coverage).';
COMMENT ON COLUMN history_rollup_run_days.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_run_days.day IS 'UTC day of the runs.';
COMMENT ON COLUMN history_rollup_run_days.project IS 'history_runs.project.';
COMMENT ON COLUMN history_rollup_run_days.branch_class IS 'main or other.';
COMMENT ON COLUMN history_rollup_run_days.source IS 'history_runs.source.';
COMMENT ON COLUMN history_rollup_run_days.runs IS 'Runs.';
COMMENT ON COLUMN history_rollup_run_days.failures_only_runs IS 'Runs that record failures only (not complete_results).';
COMMENT ON COLUMN history_rollup_run_days.first_run IS 'The first run_at of the day.';
COMMENT ON COLUMN history_rollup_run_days.last_run IS 'The last run_at of the day.';
COMMENT ON COLUMN history_rollup_run_days.pushes IS 'Distinct pushes of the runs, sorted.';
COMMENT ON COLUMN history_rollup_run_days.branch_keys IS 'Distinct branch keys of the runs, sorted.';
COMMENT ON COLUMN history_rollup_run_days.prs IS 'Distinct pull requests of the runs, sorted.';

CREATE TABLE history_rollup_run_hours (
    repository text        NOT NULL,
    hour       timestamptz NOT NULL,
    first_run  timestamptz NOT NULL,
    last_run   timestamptz NOT NULL,
    PRIMARY KEY (repository, hour)
);
COMMENT ON TABLE history_rollup_run_hours IS 'The first and last test history run of each UTC hour that has one (the coverage''s stretches without runs).';
COMMENT ON COLUMN history_rollup_run_hours.repository IS 'history_runs.repository.';
COMMENT ON COLUMN history_rollup_run_hours.hour IS 'The UTC hour.';
COMMENT ON COLUMN history_rollup_run_hours.first_run IS 'Its first run_at.';
COMMENT ON COLUMN history_rollup_run_hours.last_run IS 'Its last run_at.';

-- history_rollup_add_runs: moved to sql/functions/10_history_rollup_add_runs.sql

-- history_rollup_apply: moved to sql/functions/20_history_rollup_apply.sql

-- history_rollup_prune: moved to sql/functions/10_history_rollup_prune.sql

-- history_coverage_whole_days: moved to sql/functions/10_history_coverage_whole_days.sql

-- history_coverage_days_of: moved to sql/functions/10_history_coverage_days_of.sql

-- history_coverage_totals: moved to sql/functions/20_history_coverage_totals.sql

-- history_coverage_days: moved to sql/functions/20_history_coverage_days.sql

-- history_coverage_projects: moved to sql/functions/20_history_coverage_projects.sql

-- history_coverage_gaps: moved to sql/functions/20_history_coverage_gaps.sql

-- This migration used to count here, through history_rollup_add_runs, the runs the rest of the
-- rollup already held. The function now lives in sql/functions/ and is applied after the
-- migrations, so no migration calls it; nothing was deployed then, and a new database has no
-- runs to count (migrations/README.md).
