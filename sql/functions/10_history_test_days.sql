-- SPDX-License-Identifier: MPL-2.0
-- 10_history_test_days.sql - the function history_test_days as it stands: `retrig migrate` applies
-- it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0020_history_rollup.sql.

-- Runs and failures of one test per UTC day and branch class, from the rollup (retrig
-- report's charts; history_test_daily on the raw rows gives the same).
CREATE OR REPLACE FUNCTION history_test_days(p_repository text, p_test text, p_since date, p_until date)
RETURNS TABLE (day date, branch_class text, runs bigint, failures bigint)
LANGUAGE sql STABLE SET jit = off AS $$
WITH horizon AS (
    SELECT h.first_day FROM history_rollup_horizon h LIMIT 1
), known AS (
    SELECT x.group_name FROM history_rollup_test_groups x, horizon h
     WHERE x.repository = p_repository AND x.test = p_test AND x.day >= h.first_day
     GROUP BY x.group_name HAVING sum(x.own_rows) > 0
), counted AS (
    SELECT t.day, t.branch_class, t.runs, t.failures FROM history_rollup_tests t
     WHERE t.repository = p_repository AND t.test = p_test AND t.day >= p_since AND t.day < p_until
    UNION ALL
    SELECT g.day, g.branch_class, g.runs, 0 FROM known k
      JOIN history_rollup_groups g ON g.repository = p_repository AND g.group_name = k.group_name
     WHERE g.day >= p_since AND g.day < p_until
    UNION ALL
    SELECT x.day, x.branch_class, -x.overlap, 0 FROM known k
      JOIN history_rollup_test_groups x ON x.repository = p_repository AND x.test = p_test
                                       AND x.group_name = k.group_name
     WHERE x.day >= p_since AND x.day < p_until
)
SELECT c.day, c.branch_class, sum(c.runs)::bigint, sum(c.failures)::bigint
  FROM counted c, horizon h WHERE c.day >= h.first_day
 GROUP BY c.day, c.branch_class HAVING sum(c.runs) > 0
 ORDER BY c.day, c.branch_class
$$;
COMMENT ON FUNCTION history_test_days(text, text, date, date) IS
    'Runs and failures of one test per UTC day in [since, until) and branch class, from the rollup (retrig report''s charts).';
