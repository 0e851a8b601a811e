-- SPDX-License-Identifier: MPL-2.0
-- 10_history_rollup_add_tests.sql - the function history_rollup_add_tests as it stands: `retrig
-- migrate` applies it whenever this file changes (sql/functions/README.md). Until the functions
-- left the migrations, it was last defined by migrations/0020_history_rollup.sql.

-- The test figures: of the runs in rollup_runs (p_run_ids NULL), or of the given runs when a
-- day is counted again (p_run_ids: every run of the day, whose per-test rows the caller has
-- deleted; only the per-test tables are written then).
CREATE OR REPLACE FUNCTION history_rollup_add_tests(p_run_ids bigint[]) RETURNS void
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS rollup_test_rows (run_id bigint, run_at timestamptz, day date,
        repository text, branch_class text, branch_key text, push text, pr integer,
        complete_results boolean, test text, group_name text, failed boolean, covered boolean,
        first_failure jsonb) ON COMMIT DROP;
    TRUNCATE rollup_test_rows;
    IF p_run_ids IS NULL THEN
        INSERT INTO rollup_test_rows
        SELECT r.id, r.run_at, r.day, r.repository, r.branch_class, r.branch_key, r.push, r.pr,
               r.complete_results, t.test, t.group_name, t.failed,
               NOT r.complete_results AND t.group_name <> ''
               AND EXISTS (SELECT 1 FROM history_groups g WHERE g.run_id = r.id
                              AND g.run_at = r.run_at AND g.group_name = t.group_name),
               CASE WHEN t.failed THEN jsonb_build_object('project', r.project, 'branch', r.branch,
                    'push', r.push, 'revision', r.revision, 'signature', t.signature) END
          FROM rollup_runs r
         CROSS JOIN LATERAL (SELECT x.* FROM history_tests x
                              WHERE x.run_id = r.id AND x.run_at = r.run_at) t;
    ELSE
        INSERT INTO rollup_test_rows
        SELECT r.id, r.run_at, (r.run_at AT TIME ZONE 'UTC')::date, r.repository, r.branch_class,
               r.branch_key, r.push, r.pr, r.complete_results, t.test, t.group_name, t.failed,
               NOT r.complete_results AND t.group_name <> ''
               AND EXISTS (SELECT 1 FROM history_groups g WHERE g.run_id = r.id
                              AND g.run_at = r.run_at AND g.group_name = t.group_name),
               CASE WHEN t.failed THEN jsonb_build_object('project', r.project, 'branch', r.branch,
                    'push', r.push, 'revision', r.revision, 'signature', t.signature) END
          FROM history_runs r JOIN history_tests t ON t.run_id = r.id AND t.run_at = r.run_at
         WHERE r.id = ANY (p_run_ids);
    END IF;

    INSERT INTO history_rollup_tests AS x (repository, test, day, branch_class, runs, failures,
                                           group_min, stray_pushes, failed_pushes, prs,
                                           first_failure_at, first_failure_run, first_failure)
    SELECT t.repository, t.test, t.day, t.branch_class, count(*), count(*) FILTER (WHERE t.failed),
           min(t.group_name),
           coalesce(array_agg(DISTINCT t.push) FILTER (WHERE NOT t.covered), '{}'),
           coalesce(array_agg(DISTINCT t.push) FILTER (WHERE t.failed), '{}'),
           coalesce(array_agg(DISTINCT t.pr) FILTER (WHERE t.failed AND t.pr IS NOT NULL), '{}'),
           min(t.run_at) FILTER (WHERE t.failed),
           (array_agg(t.run_id ORDER BY t.run_at, t.run_id) FILTER (WHERE t.failed))[1],
           (array_agg(t.first_failure ORDER BY t.run_at, t.run_id) FILTER (WHERE t.failed))[1]
      FROM rollup_test_rows t GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (repository, test, day, branch_class) DO UPDATE SET
        runs = x.runs + EXCLUDED.runs,
        failures = x.failures + EXCLUDED.failures,
        group_min = least(x.group_min, EXCLUDED.group_min),
        stray_pushes = ARRAY(SELECT DISTINCT p FROM unnest(x.stray_pushes || EXCLUDED.stray_pushes) p ORDER BY p),
        failed_pushes = ARRAY(SELECT DISTINCT p FROM unnest(x.failed_pushes || EXCLUDED.failed_pushes) p ORDER BY p),
        prs = ARRAY(SELECT DISTINCT p FROM unnest(x.prs || EXCLUDED.prs) p ORDER BY p),
        first_failure_at = CASE WHEN x.first_failure_at IS NULL
                                  OR (EXCLUDED.first_failure_at, EXCLUDED.first_failure_run)
                                     < (x.first_failure_at, x.first_failure_run)
                                THEN coalesce(EXCLUDED.first_failure_at, x.first_failure_at)
                                ELSE x.first_failure_at END,
        first_failure_run = CASE WHEN x.first_failure_at IS NULL
                                  OR (EXCLUDED.first_failure_at, EXCLUDED.first_failure_run)
                                     < (x.first_failure_at, x.first_failure_run)
                                 THEN coalesce(EXCLUDED.first_failure_run, x.first_failure_run)
                                 ELSE x.first_failure_run END,
        first_failure = CASE WHEN x.first_failure_at IS NULL
                              OR (EXCLUDED.first_failure_at, EXCLUDED.first_failure_run)
                                 < (x.first_failure_at, x.first_failure_run)
                             THEN coalesce(EXCLUDED.first_failure, x.first_failure)
                             ELSE x.first_failure END;

    INSERT INTO history_rollup_test_branches AS x (repository, test, day, branch_key, first_at, last_at)
    SELECT t.repository, t.test, t.day, t.branch_key, min(t.run_at), max(t.run_at)
      FROM rollup_test_rows t WHERE t.failed AND t.branch_class <> 'main'
     GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (repository, test, day, branch_key) DO UPDATE SET
        first_at = least(x.first_at, EXCLUDED.first_at), last_at = greatest(x.last_at, EXCLUDED.last_at);

    IF p_run_ids IS NOT NULL THEN
        RETURN; -- a day counted again: merges are of complete runs, which have no group figures
    END IF;

    -- Tests and groups: the pairs known before these runs, the pairs they make known.
    CREATE TEMP TABLE IF NOT EXISTS rollup_known (repository text, test text, group_name text)
        ON COMMIT DROP;
    TRUNCATE rollup_known;
    INSERT INTO rollup_known
    SELECT DISTINCT x.repository, x.test, x.group_name
      FROM (SELECT DISTINCT repository, test FROM rollup_test_rows WHERE NOT complete_results) t
      JOIN history_rollup_test_groups x ON x.repository = t.repository AND x.test = t.test
     WHERE x.own_rows > 0;
    CREATE TEMP TABLE IF NOT EXISTS rollup_new_pairs (repository text, test text, group_name text)
        ON COMMIT DROP;
    TRUNCATE rollup_new_pairs;
    INSERT INTO rollup_new_pairs
    SELECT DISTINCT t.repository, t.test, t.group_name FROM rollup_test_rows t
     WHERE NOT t.complete_results AND t.group_name <> ''
    EXCEPT SELECT * FROM rollup_known;

    -- A pair made known now: its overlap on every day is counted from the raw rows (runs
    -- still queued are left to their turn); what was kept of it before is replaced.
    DELETE FROM history_rollup_test_groups x USING rollup_new_pairs p
     WHERE x.repository = p.repository AND x.test = p.test AND x.group_name = p.group_name;
    INSERT INTO history_rollup_test_groups (repository, test, group_name, day, branch_class, overlap)
    SELECT p.repository, p.test, p.group_name, (r.run_at AT TIME ZONE 'UTC')::date, r.branch_class,
           count(*)
      FROM rollup_new_pairs p
      JOIN history_tests t ON t.test = p.test
      JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at
       AND r.repository = p.repository AND NOT r.complete_results
     WHERE EXISTS (SELECT 1 FROM history_groups g WHERE g.run_id = t.run_id
                      AND g.run_at = t.run_at AND g.group_name = p.group_name)
       AND NOT EXISTS (SELECT 1 FROM history_rollup_queue q WHERE q.run_id = t.run_id AND q.added)
     GROUP BY 1, 2, 3, 4, 5;

    -- Own rows of every pair, and the overlap of these runs for pairs known before.
    INSERT INTO history_rollup_test_groups AS x (repository, test, group_name, day, branch_class,
                                                 own_rows, overlap)
    SELECT c.repository, c.test, c.group_name, c.day, c.branch_class, sum(c.own_rows), sum(c.overlap)
      FROM (SELECT t.repository, t.test, t.group_name, t.day, t.branch_class, 1 AS own_rows,
                   0 AS overlap
              FROM rollup_test_rows t WHERE NOT t.complete_results AND t.group_name <> ''
            UNION ALL
            SELECT t.repository, t.test, k.group_name, t.day, t.branch_class, 0, 1
              FROM rollup_test_rows t
              JOIN rollup_known k ON k.repository = t.repository AND k.test = t.test
             WHERE NOT t.complete_results
               AND EXISTS (SELECT 1 FROM history_groups g WHERE g.run_id = t.run_id
                              AND g.run_at = t.run_at AND g.group_name = k.group_name)) c
     GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (repository, test, group_name, day, branch_class) DO UPDATE SET
        own_rows = x.own_rows + EXCLUDED.own_rows, overlap = x.overlap + EXCLUDED.overlap;
END
$$;
