-- SPDX-License-Identifier: MPL-2.0
-- 20_decide_request_round.sql - the function decide_request_round as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0024_adaptive_decisions.sql.

-- retrig-decide's request for round p_round of a set, in one call: nothing unless the set's
-- latest round is p_round - 1 and it is still open (stale); an existing round row is
-- returned as it is (a redelivery: created false); else the backstop under the (platform,
-- day) lock keeps what fits of p_claimed (what Redis granted of the p_wanted the model
-- asked for; at least p_minimum), and the round's row, its ledger row and the set's count
-- are written. A round Redis (p_claimed 0) or the backstop refuses is recorded (refused,
-- retriggers 0) so that no further round is asked for.
CREATE OR REPLACE FUNCTION decide_request_round(p_set_id bigint, p_round integer, p_wanted integer,
                                     p_claimed integer, p_minimum integer, p_platform text,
                                     p_day text, p_limit integer, p_ledger_key text,
                                     p_p_regression double precision,
                                     OUT created boolean, OUT kept integer, OUT total integer,
                                     OUT refused boolean, OUT stale boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    latest integer;
    state text;
BEGIN
    created := false;
    kept := 0;
    total := 0;
    refused := false;
    stale := false;
    SELECT s.round, s.status INTO latest, state FROM retrigger_sets s
     WHERE s.id = p_set_id FOR UPDATE;
    IF NOT FOUND THEN
        stale := true;
        RETURN;
    END IF;
    SELECT r.retriggers, r.refused INTO kept, refused FROM retrigger_rounds r
     WHERE r.set_id = p_set_id AND r.round = p_round;
    IF FOUND THEN
        RETURN; -- asked for before (a redelivery, or a replica): as it is
    END IF;
    kept := 0;
    refused := false;
    IF latest <> p_round - 1 OR state NOT IN ('pending', 'requested', 'complete') THEN
        stale := true;
        RETURN;
    END IF;
    IF p_claimed > 0 THEN
        SELECT b.kept, b.total INTO kept, total
          FROM budget_backstop(p_platform, p_day, p_limit, p_claimed, p_minimum) b;
    END IF;
    created := true;
    refused := kept = 0;
    INSERT INTO retrigger_rounds (set_id, round, wanted, retriggers, refused, p_regression,
                                  platform, day)
    VALUES (p_set_id, p_round, p_wanted, kept, refused, p_p_regression, p_platform,
            p_day::date);
    IF refused THEN
        RETURN; -- the set's round stays: nothing was asked for
    END IF;
    INSERT INTO budget_ledger (platform, day, amount, idempotency_key, set_id, reason)
    VALUES (p_platform, p_day::date, kept, p_ledger_key, p_set_id, 'retrigger');
    UPDATE retrigger_sets
       SET round = p_round, later_retriggers = later_retriggers + kept, status = 'pending',
           updated_at = now()
     WHERE id = p_set_id;
END;
$$;
COMMENT ON FUNCTION decide_request_round(bigint, integer, integer, integer, integer, text, text,
                                         integer, text, double precision) IS
    'retrig-decide (decide_policy = adaptive): asks for round p_round of a set in one call: its retrigger_rounds row, the budget backstop on what Redis granted (p_claimed), the ledger row p_ledger_key and the set''s round, later_retriggers and status (pending until retrig-retrigger acts). stale: the set moved on (decided, or another round); created false with kept: the round existed; refused: Redis or the backstop granted nothing (recorded, no ledger row).';
