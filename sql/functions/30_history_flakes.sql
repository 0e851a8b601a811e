-- SPDX-License-Identifier: MPL-2.0
-- 30_history_flakes.sql - the function history_flakes as it stands: `retrig migrate` applies it
-- whenever this file changes (sql/functions/README.md). Until the functions left the migrations,
-- it was last defined by migrations/0020_history_rollup.sql.

-- history_flakes: 0014's arguments, columns and answers; from the rollup when the window is
-- whole UTC days, else from the raw rows.
CREATE OR REPLACE FUNCTION history_flakes(p_repository text, p_since timestamptz, p_until timestamptz,
                               p_main_only boolean, p_min_branches integer,
                               p_flaky_window interval)
RETURNS TABLE (test text, group_name text, runs bigint, failures bigint,
               failure_rate double precision, pushes bigint, pushes_failed bigint,
               push_failure_chance double precision, branches bigint, prs bigint,
               first_failure_at timestamptz, first_failure_project text,
               first_failure_branch text, first_failure_push text,
               first_failure_revision text, first_failure_signature text, flaky boolean)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF isfinite(p_since) AND isfinite(p_until) AND p_since < p_until
       AND date_trunc('day', p_since AT TIME ZONE 'UTC') = p_since AT TIME ZONE 'UTC'
       AND date_trunc('day', p_until AT TIME ZONE 'UTC') = p_until AT TIME ZONE 'UTC'
       AND p_flaky_window >= interval '1 day' THEN
        RETURN QUERY SELECT * FROM history_flakes_rollup(p_repository, p_since, p_until, p_main_only,
                                                         p_min_branches, p_flaky_window);
    ELSE
        RETURN QUERY SELECT * FROM history_flakes_raw(p_repository, p_since, p_until, p_main_only,
                                                      p_min_branches, p_flaky_window);
    END IF;
END
$$;
COMMENT ON FUNCTION history_flakes(text, timestamptz, timestamptz, boolean, integer, interval) IS
    'Per test of a repository in [since, until): runs, failures, failure rate, breadth (pushes, branches under review, pull requests), the first failure (any signature, any time), and the flaky flag (failed on more than min_branches branches of class other within flaky_window, a try push''s author being one branch, failures on or after a day when main was broken by the test left out: migration 0032). From the per-day rollup for whole UTC days (history_flakes_rollup), else from the raw rows (history_flakes_raw). Used by retrig flakes and retrig report.';
