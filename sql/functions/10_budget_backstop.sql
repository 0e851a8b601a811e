-- SPDX-License-Identifier: MPL-2.0
-- 10_budget_backstop.sql - the function budget_backstop as it stands: `retrig migrate` applies it
-- whenever this file changes (sql/functions/README.md). Until the functions left the migrations,
-- it was last defined by migrations/0012_set_creation_in_one_call.sql.
CREATE OR REPLACE FUNCTION budget_backstop(p_platform text, p_day text, p_limit integer,
                                p_claimed integer, p_minimum integer,
                                OUT kept integer, OUT total integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    left_over integer;
BEGIN
    PERFORM pg_advisory_xact_lock(7274, hashtext(p_platform || '/' || p_day));
    SELECT coalesce((SELECT spent FROM budget_daily
                      WHERE platform = p_platform AND day = p_day::date), 0)
      INTO total;
    left_over := p_limit - total;
    IF p_claimed <= left_over THEN
        kept := p_claimed;
    ELSIF left_over > 0 AND left_over >= p_minimum THEN
        kept := left_over;
    ELSE
        kept := 0;
    END IF;
END;
$$;
COMMENT ON FUNCTION budget_backstop(text, text, integer, integer, integer) IS
    'The budget backstop (common/ledger.h): locks (platform, day) until the transaction ends; kept = what of the claim fits under the limit (0 when less than the minimum), total = the ledger total before it.';
