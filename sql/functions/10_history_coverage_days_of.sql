-- SPDX-License-Identifier: MPL-2.0
-- 10_history_coverage_days_of.sql - the function history_coverage_days_of as it stands: `retrig
-- migrate` applies it whenever this file changes (sql/functions/README.md). Until the functions
-- left the migrations, it was last defined by migrations/0030_history_coverage_rollup.sql.

-- The rollup's rows of a window of whole days (those retention kept).
CREATE OR REPLACE FUNCTION history_coverage_days_of(p_repository text, p_since timestamptz,
                                         p_until timestamptz)
RETURNS SETOF history_rollup_run_days LANGUAGE sql STABLE AS $$
SELECT x.*
  FROM history_rollup_run_days x, history_rollup_horizon h
 WHERE x.repository = p_repository
   AND x.day >= greatest((p_since AT TIME ZONE 'UTC')::date, h.first_day)
   AND x.day < (p_until AT TIME ZONE 'UTC')::date
$$;
COMMENT ON FUNCTION history_coverage_days_of(text, timestamptz, timestamptz) IS
    'history_rollup_run_days of a repository in [since, until), UTC midnights, from the first day retention kept.';
