-- SPDX-License-Identifier: MPL-2.0
-- 0040_history_build_type.sql (issue 31): a Mozilla outcome keeps its variant, the platform
-- and the build type Treeherder shows beside it (debug, opt, asan, ...). retrig-history
-- stores each Taskcluster run's build type (common/core/taskdef.h: extra.treeherder's labels,
-- else its collection's names, else "opt"; several sorted and joined with ","), and the view
-- taskcluster_run_variants names each run's variant "<platform>/<build type>" (the platform
-- alone for runs stored before, or whose build type is unknown). retrig flakes, the
-- flaky-test page and the flaky-test issues break a Mozilla test's failures down by it as
-- they do a GitHub test's by matrix job (github_run_variants, migration 0038), and say when
-- it fails on one variant only.
ALTER TABLE history_runs ADD COLUMN build_type text;
COMMENT ON COLUMN history_runs.build_type IS
    'The build type Treeherder shows beside the platform (debug, opt, asan, tsan, ccov; several sorted and joined with ","): extra.treeherder.labels, else the names of extra.treeherder.collection, else opt. NULL for JUnit and GitHub runs, runs stored before migration 0040, and definitions whose labels or collection are malformed.';

CREATE VIEW taskcluster_run_variants AS
SELECT id AS history_run_id, run_at, repository,
       CASE WHEN build_type IS NULL THEN platform ELSE platform || '/' || build_type END AS variant
  FROM history_runs
 WHERE source = 'taskcluster' AND platform IS NOT NULL;
COMMENT ON VIEW taskcluster_run_variants IS
    'The variant of each Taskcluster run: "<platform>/<build type>" (linux1804-64-qr/debug), the platform alone when the build type is unknown; runs without a platform have none.';
