-- SPDX-License-Identifier: MPL-2.0
-- 10_history_tests_days.sql - the function history_tests_days as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0026_history_tests_days.sql.
CREATE OR REPLACE FUNCTION history_tests_days(p_repository text, p_tests text[], p_since date, p_until date)
RETURNS TABLE (test text, day date, branch_class text, runs bigint, failures bigint)
LANGUAGE sql STABLE SET jit = off AS $$
WITH horizon AS (
    SELECT h.first_day FROM history_rollup_horizon h LIMIT 1
), listed AS (
    SELECT DISTINCT l.test FROM unnest(p_tests) AS l (test)
), known AS (
    SELECT x.test, x.group_name
      FROM listed l
      JOIN history_rollup_test_groups x ON x.repository = p_repository AND x.test = l.test
     CROSS JOIN horizon h
     WHERE x.day >= h.first_day
     GROUP BY x.test, x.group_name HAVING sum(x.own_rows) > 0
), counted AS (
    SELECT t.test, t.day, t.branch_class, t.runs, t.failures
      FROM listed l
      JOIN history_rollup_tests t ON t.repository = p_repository AND t.test = l.test
     WHERE t.day >= p_since AND t.day < p_until
    UNION ALL
    SELECT k.test, g.day, g.branch_class, g.runs, 0
      FROM known k
      JOIN history_rollup_groups g ON g.repository = p_repository AND g.group_name = k.group_name
     WHERE g.day >= p_since AND g.day < p_until
    UNION ALL
    SELECT k.test, x.day, x.branch_class, -x.overlap, 0
      FROM known k
      JOIN history_rollup_test_groups x ON x.repository = p_repository AND x.test = k.test
                                       AND x.group_name = k.group_name
     WHERE x.day >= p_since AND x.day < p_until
)
SELECT c.test, c.day, c.branch_class, sum(c.runs)::bigint, sum(c.failures)::bigint
  FROM counted c CROSS JOIN horizon h
 WHERE c.day >= h.first_day
 GROUP BY c.test, c.day, c.branch_class HAVING sum(c.runs) > 0
$$;
COMMENT ON FUNCTION history_tests_days(text, text[], date, date) IS
    'history_test_days for a list of tests: runs and failures of each per UTC day in [since, until) and branch class, from the rollup (retrig report''s charts over whole days).';
