-- SPDX-License-Identifier: MPL-2.0
-- 40_history_flakes_7d.sql - the view history_flakes_7d as it stands: `retrig migrate` applies it
-- whenever this file changes (sql/functions/README.md). Until the functions left the migrations,
-- it was last defined by migrations/0019_history_partitions.sql.
CREATE OR REPLACE VIEW history_flakes_7d AS
SELECT r.repository, f.*
  FROM (SELECT DISTINCT repository FROM history_runs
         WHERE run_at >= now() - interval '14 days') r,
       LATERAL history_flakes(r.repository, now() - interval '7 days', now() + interval '1 minute',
                              false, 3, interval '7 days') f;
COMMENT ON VIEW history_flakes_7d IS
    'history_flakes over the last 7 days for every repository, all branches, flaky = failed on more than 3 branches or PRs within 7 days.';
