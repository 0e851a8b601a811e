-- SPDX-License-Identifier: MPL-2.0
-- 20_history_coverage_totals.sql - the function history_coverage_totals as it stands: `retrig
-- migrate` applies it whenever this file changes (sql/functions/README.md). Until the functions
-- left the migrations, it was last defined by migrations/0030_history_coverage_rollup.sql.
CREATE OR REPLACE FUNCTION history_coverage_totals(p_repository text, p_since timestamptz,
                                        p_until timestamptz, p_rollup boolean DEFAULT NULL)
RETURNS TABLE (runs bigint, main_runs bigint, pushes bigint, main_pushes bigint,
               other_branches bigint, prs bigint, failures_only_runs bigint,
               first_run timestamptz, last_run timestamptz)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF coalesce(p_rollup, history_coverage_whole_days(p_since, p_until)) THEN
        RETURN QUERY
        WITH d AS MATERIALIZED (SELECT * FROM history_coverage_days_of(p_repository, p_since, p_until))
        SELECT coalesce(sum(d.runs), 0)::bigint,
               coalesce(sum(d.runs) FILTER (WHERE d.branch_class = 'main'), 0)::bigint,
               (SELECT count(*) FROM (SELECT DISTINCT y.project, p
                                        FROM d y, unnest(y.pushes) p) z),
               (SELECT count(*) FROM (SELECT DISTINCT y.project, p
                                        FROM d y, unnest(y.pushes) p
                                       WHERE y.branch_class = 'main') z),
               (SELECT count(DISTINCT b) FROM d y, unnest(y.branch_keys) b
                 WHERE y.branch_class <> 'main'),
               (SELECT count(DISTINCT p) FROM d y, unnest(y.prs) p),
               coalesce(sum(d.failures_only_runs), 0)::bigint, min(d.first_run), max(d.last_run)
          FROM d;
    ELSE
        RETURN QUERY
        SELECT count(*), count(*) FILTER (WHERE r.branch_class = 'main'),
               count(DISTINCT (r.project, r.push)),
               count(DISTINCT (r.project, r.push)) FILTER (WHERE r.branch_class = 'main'),
               count(DISTINCT r.branch_key) FILTER (WHERE r.branch_class <> 'main'),
               count(DISTINCT r.pr), count(*) FILTER (WHERE NOT r.complete_results),
               min(r.run_at), max(r.run_at)
          FROM history_runs r
         WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until;
    END IF;
END
$$;
COMMENT ON FUNCTION history_coverage_totals(text, timestamptz, timestamptz, boolean) IS
    'Runs, main runs, distinct pushes (all, main), branches of class other, pull requests, failures-only runs, first and last run of a repository in [since, until): from the rollup for whole UTC days (p_rollup NULL), else from history_runs; p_rollup true or false forces one.';
