-- SPDX-License-Identifier: MPL-2.0
-- 20_history_coverage_days.sql - the function history_coverage_days as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0030_history_coverage_rollup.sql.
CREATE OR REPLACE FUNCTION history_coverage_days(p_repository text, p_since timestamptz,
                                      p_until timestamptz, p_rollup boolean DEFAULT NULL)
RETURNS TABLE (day date, runs bigint, main_runs bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF coalesce(p_rollup, history_coverage_whole_days(p_since, p_until)) THEN
        RETURN QUERY
        SELECT d.day, sum(d.runs)::bigint,
               coalesce(sum(d.runs) FILTER (WHERE d.branch_class = 'main'), 0)::bigint
          FROM history_coverage_days_of(p_repository, p_since, p_until) d
         GROUP BY d.day ORDER BY d.day;
    ELSE
        RETURN QUERY
        SELECT (r.run_at AT TIME ZONE 'UTC')::date, count(*),
               count(*) FILTER (WHERE r.branch_class = 'main')
          FROM history_runs r
         WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until
         GROUP BY 1 ORDER BY 1;
    END IF;
END
$$;
COMMENT ON FUNCTION history_coverage_days(text, timestamptz, timestamptz, boolean) IS
    'Runs and main runs of a repository per UTC day of [since, until), days with runs only; rollup or raw as history_coverage_totals.';
