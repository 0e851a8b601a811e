-- SPDX-License-Identifier: MPL-2.0
-- 10_history_group_stats.sql - the function history_group_stats as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0006_history.sql.

-- The same per group: runs, failures, rate and breadth.
CREATE OR REPLACE FUNCTION history_group_stats(p_repository text, p_since timestamptz,
                                    p_until timestamptz, p_main_only boolean)
RETURNS TABLE (group_name text, runs bigint, failures bigint, failure_rate double precision,
               pushes bigint, pushes_failed bigint, branches bigint, prs bigint)
LANGUAGE sql STABLE AS $$
SELECT g.group_name, count(*), count(*) FILTER (WHERE g.failed),
       count(*) FILTER (WHERE g.failed)::double precision / count(*),
       count(DISTINCT r.push), count(DISTINCT r.push) FILTER (WHERE g.failed),
       count(DISTINCT r.branch_key) FILTER (WHERE g.failed),
       count(DISTINCT r.pr) FILTER (WHERE g.failed)
  FROM history_groups g
  JOIN history_runs r ON r.id = g.run_id
 WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until
   AND (NOT p_main_only OR r.branch_class = 'main')
 GROUP BY g.group_name
 ORDER BY count(*) FILTER (WHERE g.failed) DESC, g.group_name
$$;
COMMENT ON FUNCTION history_group_stats(text, timestamptz, timestamptz, boolean) IS
    'Per test group of a repository in [since, until): runs, failures, failure rate and breadth (pushes, branches, pull requests it failed on).';
