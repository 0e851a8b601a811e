-- SPDX-License-Identifier: MPL-2.0
-- 20_history_coverage_gaps.sql - the function history_coverage_gaps as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0030_history_coverage_rollup.sql.
CREATE OR REPLACE FUNCTION history_coverage_gaps(p_repository text, p_since timestamptz,
                                      p_until timestamptz, p_seconds integer, p_limit integer,
                                      p_rollup boolean DEFAULT NULL)
RETURNS TABLE (gap_from timestamptz, gap_to timestamptz, seconds bigint, at_start boolean,
               at_end boolean)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF coalesce(p_rollup, history_coverage_whole_days(p_since, p_until) AND p_seconds >= 3600) THEN
        -- an hour's runs are less than an hour apart: only the stretches between two hours
        -- with runs (or the window's ends) can be long enough
        RETURN QUERY
        WITH t AS (SELECT x.first_run AS a, x.last_run AS b
                     FROM history_rollup_run_hours x, history_rollup_horizon h
                    WHERE x.repository = p_repository AND x.hour >= p_since AND x.hour < p_until
                      AND x.hour >= h.first_day::timestamp AT TIME ZONE 'UTC'
                   UNION ALL SELECT p_since, p_since UNION ALL SELECT p_until, p_until),
        g AS (SELECT lag(t.b) OVER (ORDER BY t.a, t.b) AS a, t.a AS b FROM t)
        SELECT g.a, g.b, extract(epoch FROM g.b - g.a)::bigint, g.a = p_since, g.b = p_until
          FROM g WHERE g.b - g.a >= make_interval(secs => p_seconds) ORDER BY g.a LIMIT p_limit;
    ELSE
        RETURN QUERY
        WITH t AS (SELECT r.run_at FROM history_runs r
                    WHERE r.repository = p_repository AND r.run_at >= p_since
                      AND r.run_at < p_until
                   UNION ALL SELECT p_since UNION ALL SELECT p_until),
        g AS (SELECT lag(t.run_at) OVER (ORDER BY t.run_at) AS a, t.run_at AS b FROM t)
        SELECT g.a, g.b, extract(epoch FROM g.b - g.a)::bigint, g.a = p_since, g.b = p_until
          FROM g WHERE g.b - g.a >= make_interval(secs => p_seconds) ORDER BY g.a LIMIT p_limit;
    END IF;
END
$$;
COMMENT ON FUNCTION history_coverage_gaps(text, timestamptz, timestamptz, integer, integer, boolean) IS
    'Stretches of at least p_seconds with no run of a repository in [since, until), the window''s ends counting as runs; the first p_limit by start. From the hourly rollup for whole UTC days and at least an hour (p_rollup NULL), else from history_runs.';
