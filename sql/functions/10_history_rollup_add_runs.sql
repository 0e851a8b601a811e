-- SPDX-License-Identifier: MPL-2.0
-- 10_history_rollup_add_runs.sql - the function history_rollup_add_runs as it stands: `retrig
-- migrate` applies it whenever this file changes (sql/functions/README.md). Until the functions
-- left the migrations, it was last defined by migrations/0030_history_coverage_rollup.sql.

-- The run figures of the runs in rollup_runs (history_rollup_apply's chunk).
CREATE OR REPLACE FUNCTION history_rollup_add_runs() RETURNS void
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
    INSERT INTO history_rollup_run_days AS x (repository, day, project, branch_class, source,
                                              runs, failures_only_runs, first_run, last_run,
                                              pushes, branch_keys, prs)
    SELECT r.repository, r.day, r.project, r.branch_class, r.source, count(*),
           count(*) FILTER (WHERE NOT r.complete_results), min(r.run_at), max(r.run_at),
           array_agg(DISTINCT r.push ORDER BY r.push),
           array_agg(DISTINCT r.branch_key ORDER BY r.branch_key),
           coalesce(array_agg(DISTINCT r.pr ORDER BY r.pr) FILTER (WHERE r.pr IS NOT NULL), '{}')
      FROM rollup_runs r
     GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (repository, day, project, branch_class, source) DO UPDATE
       SET runs = x.runs + EXCLUDED.runs,
           failures_only_runs = x.failures_only_runs + EXCLUDED.failures_only_runs,
           first_run = least(x.first_run, EXCLUDED.first_run),
           last_run = greatest(x.last_run, EXCLUDED.last_run),
           pushes = CASE WHEN x.pushes @> EXCLUDED.pushes THEN x.pushes
                         ELSE ARRAY(SELECT DISTINCT p FROM unnest(x.pushes || EXCLUDED.pushes) p
                                     ORDER BY p) END,
           branch_keys = CASE WHEN x.branch_keys @> EXCLUDED.branch_keys THEN x.branch_keys
                              ELSE ARRAY(SELECT DISTINCT b
                                           FROM unnest(x.branch_keys || EXCLUDED.branch_keys) b
                                          ORDER BY b) END,
           prs = CASE WHEN x.prs @> EXCLUDED.prs THEN x.prs
                      ELSE ARRAY(SELECT DISTINCT p FROM unnest(x.prs || EXCLUDED.prs) p
                                  ORDER BY p) END;
    INSERT INTO history_rollup_run_hours AS x (repository, hour, first_run, last_run)
    SELECT r.repository, date_trunc('hour', r.run_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
           min(r.run_at), max(r.run_at)
      FROM rollup_runs r
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (repository, hour) DO UPDATE
       SET first_run = least(x.first_run, EXCLUDED.first_run),
           last_run = greatest(x.last_run, EXCLUDED.last_run)
     WHERE EXCLUDED.first_run < x.first_run OR EXCLUDED.last_run > x.last_run;
END
$$;
COMMENT ON FUNCTION history_rollup_add_runs() IS
    'history_rollup_apply''s step for history_rollup_run_days and history_rollup_run_hours.';
