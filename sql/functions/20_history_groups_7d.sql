-- SPDX-License-Identifier: MPL-2.0
-- 20_history_groups_7d.sql - the view history_groups_7d as it stands: `retrig migrate` applies it
-- whenever this file changes (sql/functions/README.md). Until the functions left the migrations,
-- it was last defined by migrations/0019_history_partitions.sql.
CREATE OR REPLACE VIEW history_groups_7d AS
SELECT r.repository, g.*
  FROM (SELECT DISTINCT repository FROM history_runs
         WHERE run_at >= now() - interval '14 days') r,
       LATERAL history_group_stats(r.repository, now() - interval '7 days',
                                   now() + interval '1 minute', false) g;
COMMENT ON VIEW history_groups_7d IS 'history_group_stats over the last 7 days for every repository, all branches.';
