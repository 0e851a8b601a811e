-- SPDX-License-Identifier: MPL-2.0
-- 10_history_rollup_add_groups.sql - the function history_rollup_add_groups as it stands: `retrig
-- migrate` applies it whenever this file changes (sql/functions/README.md). Until the functions
-- left the migrations, it was last defined by migrations/0020_history_rollup.sql.

-- The group figures of the runs in rollup_runs: runs per group and day, the pushes' days.
CREATE OR REPLACE FUNCTION history_rollup_add_groups() RETURNS void
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS rollup_group_rows (repository text, group_name text, day date,
        branch_class text, push text) ON COMMIT DROP;
    TRUNCATE rollup_group_rows;
    -- each run's groups through the primary key of its own partition
    INSERT INTO rollup_group_rows
    SELECT r.repository, g.group_name, r.day, r.branch_class, r.push
      FROM rollup_runs r
     CROSS JOIN LATERAL (SELECT x.group_name FROM history_groups x
                          WHERE x.run_id = r.id AND x.run_at = r.run_at) g
     WHERE NOT r.complete_results;

    INSERT INTO history_rollup_groups AS x (repository, group_name, day, branch_class, runs)
    SELECT g.repository, g.group_name, g.day, g.branch_class, count(*)
      FROM rollup_group_rows g GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (repository, group_name, day, branch_class)
    DO UPDATE SET runs = x.runs + EXCLUDED.runs;

    -- Each (push, group): its days before and after, and what that changes in the counts of
    -- pushes by previous day.
    INSERT INTO history_rollup_pushes AS x (repository, push, first_day, min_day, last_day)
    SELECT g.repository, g.push, min(g.day), min(g.day), max(g.day) FROM rollup_group_rows g
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (repository, push) DO UPDATE
       SET min_day = least(x.min_day, EXCLUDED.min_day),
           last_day = greatest(x.last_day, EXCLUDED.last_day)
     WHERE EXCLUDED.last_day > x.last_day OR EXCLUDED.min_day < x.min_day;
    CREATE TEMP TABLE IF NOT EXISTS rollup_push_days (repository text, push text,
        group_name text, first_day date, old_days date[], old_main date[], new_days date[],
        new_main date[]) ON COMMIT DROP;
    TRUNCATE rollup_push_days;
    ANALYZE rollup_group_rows;
    -- (array_agg DISTINCT gives the days sorted; a pair seen before merges its days)
    INSERT INTO rollup_push_days
    SELECT o.repository, o.push, o.group_name, p.first_day, x.days, x.main_days,
           CASE WHEN x.days IS NULL OR x.days @> o.days THEN coalesce(x.days, o.days)
                ELSE ARRAY(SELECT DISTINCT d FROM unnest(x.days || o.days) d ORDER BY d) END,
           CASE WHEN x.main_days IS NULL OR x.main_days @> o.main_days
                THEN coalesce(x.main_days, o.main_days)
                ELSE ARRAY(SELECT DISTINCT d FROM unnest(x.main_days || o.main_days) d
                            ORDER BY d) END
      FROM (SELECT g.repository, g.push, g.group_name, array_agg(DISTINCT g.day) AS days,
                   coalesce(array_agg(DISTINCT g.day) FILTER (WHERE g.branch_class = 'main'),
                            '{}') AS main_days
              FROM rollup_group_rows g GROUP BY 1, 2, 3) o
      JOIN history_rollup_pushes p ON p.repository = o.repository AND p.push = o.push
      LEFT JOIN LATERAL (
            SELECT x.days, x.main_days FROM history_rollup_push_groups x
             WHERE x.repository = o.repository AND x.push = o.push
               AND x.group_name = o.group_name AND x.first_day = p.first_day
            OFFSET 0) x ON true; -- (not flattened: the push's partition, by its first day)
    DELETE FROM rollup_push_days
     WHERE new_days = old_days AND new_main = old_main;

    INSERT INTO history_rollup_group_pushes AS x (repository, group_name, day, scope, prev_day, pushes)
    SELECT c.repository, c.group_name, c.day, c.scope, c.prev_day, sum(c.n)
      FROM (SELECT p.repository, p.group_name, a.day, 'all' AS scope,
                   coalesce(p.new_days[a.i - 1], '-infinity') AS prev_day, 1 AS n
              FROM rollup_push_days p, unnest(p.new_days) WITH ORDINALITY a(day, i)
            UNION ALL
            SELECT p.repository, p.group_name, a.day, 'all', coalesce(p.old_days[a.i - 1], '-infinity'), -1
              FROM rollup_push_days p, unnest(p.old_days) WITH ORDINALITY a(day, i)
            UNION ALL
            SELECT p.repository, p.group_name, a.day, 'main', coalesce(p.new_main[a.i - 1], '-infinity'), 1
              FROM rollup_push_days p, unnest(p.new_main) WITH ORDINALITY a(day, i)
            UNION ALL
            SELECT p.repository, p.group_name, a.day, 'main', coalesce(p.old_main[a.i - 1], '-infinity'), -1
              FROM rollup_push_days p, unnest(p.old_main) WITH ORDINALITY a(day, i)) c
     GROUP BY 1, 2, 3, 4, 5
    HAVING sum(c.n) <> 0
     ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (repository, group_name, day, scope, prev_day)
    DO UPDATE SET pushes = x.pushes + EXCLUDED.pushes;

    INSERT INTO history_rollup_push_groups AS x (repository, first_day, push, group_name, days, main_days)
    SELECT p.repository, p.first_day, p.push, p.group_name, p.new_days, p.new_main
      FROM rollup_push_days p ORDER BY 1, 3, 4
    ON CONFLICT (repository, push, group_name, first_day)
    DO UPDATE SET days = EXCLUDED.days, main_days = EXCLUDED.main_days;
END
$$;
