-- SPDX-License-Identifier: MPL-2.0
-- 10_history_coverage_whole_days.sql - the function history_coverage_whole_days as it stands:
-- `retrig migrate` applies it whenever this file changes (sql/functions/README.md). Until the
-- functions left the migrations, it was last defined by
-- migrations/0030_history_coverage_rollup.sql.

-- Whether a coverage read of [p_since, p_until) can come from the rollup: whole UTC days.
CREATE OR REPLACE FUNCTION history_coverage_whole_days(p_since timestamptz, p_until timestamptz)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
SELECT isfinite(p_since) AND isfinite(p_until) AND p_since < p_until
       AND date_trunc('day', p_since AT TIME ZONE 'UTC') = p_since AT TIME ZONE 'UTC'
       AND date_trunc('day', p_until AT TIME ZONE 'UTC') = p_until AT TIME ZONE 'UTC'
$$;
COMMENT ON FUNCTION history_coverage_whole_days(timestamptz, timestamptz) IS
    'True when since and until are UTC midnights (the coverage reads the rollup then).';
