-- SPDX-License-Identifier: MPL-2.0
-- 20_history_coverage_projects.sql - the function history_coverage_projects as it stands: `retrig
-- migrate` applies it whenever this file changes (sql/functions/README.md). Until the functions
-- left the migrations, it was last defined by migrations/0030_history_coverage_rollup.sql.
CREATE OR REPLACE FUNCTION history_coverage_projects(p_repository text, p_since timestamptz,
                                          p_until timestamptz, p_limit integer,
                                          p_rollup boolean DEFAULT NULL)
RETURNS TABLE (project text, branch_class text, source text, runs bigint, pushes bigint,
               last_run timestamptz, branches bigint, prs bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF coalesce(p_rollup, history_coverage_whole_days(p_since, p_until)) THEN
        RETURN QUERY
        WITH d AS MATERIALIZED (SELECT * FROM history_coverage_days_of(p_repository, p_since, p_until)),
        s AS (SELECT d.project, d.branch_class, d.source, sum(d.runs)::bigint AS runs,
                     max(d.last_run) AS last_run
                FROM d GROUP BY 1, 2, 3)
        SELECT s.project, s.branch_class, s.source, s.runs,
               (SELECT count(DISTINCT p) FROM d y, unnest(y.pushes) p
                 WHERE y.project = s.project AND y.branch_class = s.branch_class
                   AND y.source = s.source),
               s.last_run,
               (SELECT count(DISTINCT b) FROM d y, unnest(y.branch_keys) b
                 WHERE y.project = s.project AND y.branch_class = s.branch_class
                   AND y.source = s.source),
               (SELECT count(DISTINCT p) FROM d y, unnest(y.prs) p
                 WHERE y.project = s.project AND y.branch_class = s.branch_class
                   AND y.source = s.source)
          FROM s
         ORDER BY s.runs DESC, s.project, s.branch_class, s.source LIMIT p_limit;
    ELSE
        RETURN QUERY
        SELECT r.project, r.branch_class, r.source, count(*), count(DISTINCT r.push),
               max(r.run_at), count(DISTINCT r.branch_key), count(DISTINCT r.pr)
          FROM history_runs r
         WHERE r.repository = p_repository AND r.run_at >= p_since AND r.run_at < p_until
         GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2, 3 LIMIT p_limit;
    END IF;
END
$$;
COMMENT ON FUNCTION history_coverage_projects(text, timestamptz, timestamptz, integer, boolean) IS
    'Per project, branch class and source of a repository in [since, until): runs, distinct pushes, last run, distinct branch keys and pull requests; the most runs first, at most p_limit rows; rollup or raw as history_coverage_totals.';
