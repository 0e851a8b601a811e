-- SPDX-License-Identifier: MPL-2.0
-- 30_history_test_variants.sql - the function history_test_variants (migration 0041): a
-- Firefox CI test's runs and failures per variant, read by retrig flakes, retrig report and
-- retrig flaky-issues (common/store/outcomes.c); from the rollup for whole UTC days, else
-- from the raw rows, as history_flakes chooses.
CREATE OR REPLACE FUNCTION history_test_variants(p_repository text, p_since timestamptz,
                                                 p_until timestamptz)
RETURNS TABLE (test text, variant text, runs bigint, failures bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF isfinite(p_since) AND isfinite(p_until) AND p_since < p_until
       AND date_trunc('day', p_since AT TIME ZONE 'UTC') = p_since AT TIME ZONE 'UTC'
       AND date_trunc('day', p_until AT TIME ZONE 'UTC') = p_until AT TIME ZONE 'UTC' THEN
        RETURN QUERY SELECT * FROM history_test_variants_rollup(p_repository, p_since, p_until);
    ELSE
        RETURN QUERY SELECT * FROM history_test_variants_raw(p_repository, p_since, p_until);
    END IF;
END
$$;
COMMENT ON FUNCTION history_test_variants(text, timestamptz, timestamptz) IS
    'Per test that failed in a Taskcluster run of the repository in [since, until) and per variant (platform/build type): runs and failures. From the per-day rollup for whole UTC days (history_test_variants_rollup), else the raw rows (history_test_variants_raw).';
