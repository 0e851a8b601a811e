-- SPDX-License-Identifier: MPL-2.0
-- 10_history_run_marks.sql - the function history_run_marks as it stands: `retrig migrate` applies
-- it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0021_history_raw_reads.sql.
CREATE OR REPLACE FUNCTION history_run_marks(p_repository text, p_tests text[], p_start timestamptz,
                                  p_until timestamptz, p_slot_seconds integer)
RETURNS TABLE (test text, slot integer, main boolean, runs bigint, failures bigint)
LANGUAGE sql STABLE AS $$
WITH listed AS (
    SELECT DISTINCT l.test FROM unnest(p_tests) AS l (test)
), recorded AS (
    SELECT t.run_id, t.run_at, t.test, t.failed, r.complete_results, r.branch_class = 'main' AS main,
           floor(extract(epoch FROM r.run_at - p_start) / p_slot_seconds)::integer AS slot
      FROM listed l
      JOIN history_tests t ON t.test = l.test AND t.run_at >= p_start AND t.run_at < p_until
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
     WHERE r.repository = p_repository AND r.run_at >= p_start AND r.run_at < p_until
), known AS (
    SELECT DISTINCT t.test, t.group_name
      FROM listed l
      JOIN history_tests t ON t.test = l.test AND t.group_name <> ''
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at AND NOT r.complete_results
     WHERE r.repository = p_repository
), group_slots AS (
    SELECT kg.group_name,
           floor(extract(epoch FROM r.run_at - p_start) / p_slot_seconds)::integer AS slot,
           r.branch_class = 'main' AS main, count(*) AS runs
      FROM (SELECT DISTINCT k.group_name FROM known k) kg
     CROSS JOIN LATERAL (SELECT g.run_id, g.run_at FROM history_groups g
                          WHERE g.group_name = kg.group_name
                            AND g.run_at >= p_start AND g.run_at < p_until OFFSET 0) g
      JOIN history_runs r ON r.id = g.run_id AND r.run_at = g.run_at
     WHERE r.repository = p_repository AND NOT r.complete_results
       AND r.run_at >= p_start AND r.run_at < p_until
     GROUP BY 1, 2, 3
), derived AS (
    SELECT k.test, gs.slot, gs.main, sum(gs.runs) AS runs
      FROM known k
      JOIN group_slots gs ON gs.group_name = k.group_name
     GROUP BY 1, 2, 3
), overlap AS (
    -- per test, slot and class: the runs of its known groups that recorded it, counted once
    -- per group as derived counted them
    SELECT k.test, rc.slot, rc.main, count(*) AS runs
      FROM known k
      JOIN recorded rc ON rc.test = k.test AND NOT rc.complete_results
     WHERE (SELECT true FROM history_groups g
             WHERE g.run_id = rc.run_id AND g.run_at = rc.run_at AND g.group_name = k.group_name)
     GROUP BY 1, 2, 3
), own AS (
    SELECT rc.test, rc.slot, rc.main, count(*) AS runs,
           count(*) FILTER (WHERE rc.failed) AS failures
      FROM recorded rc
     GROUP BY 1, 2, 3
), merged AS (
    SELECT coalesce(o.test, d.test) AS test, coalesce(o.slot, d.slot) AS slot,
           coalesce(o.main, d.main) AS main, coalesce(o.runs, 0) AS own_runs,
           coalesce(d.runs, 0) AS derived_runs, coalesce(o.failures, 0) AS failures
      FROM own o
      FULL JOIN derived d ON d.test = o.test AND d.slot = o.slot AND d.main = o.main
)
SELECT m.test, m.slot, m.main, m.own_runs + m.derived_runs - coalesce(ov.runs, 0), m.failures
  FROM merged m
  LEFT JOIN overlap ov ON ov.test = m.test AND ov.slot = m.slot AND ov.main = m.main
 WHERE m.own_runs + m.derived_runs - coalesce(ov.runs, 0) > 0
 ORDER BY 1, 2, 3
$$;
COMMENT ON FUNCTION history_run_marks(text, text[], timestamptz, timestamptz, integer) IS
    'Per listed test of a repository in [start, until): runs and failures (the rows of history_test_runs) per slot of slot_seconds from start (slot 0 starts at start), on main branches (main true) or elsewhere. What retrig report draws.';
