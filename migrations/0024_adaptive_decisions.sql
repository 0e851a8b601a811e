-- SPDX-License-Identifier: MPL-2.0
-- 0024_adaptive_decisions.sql - the verdict policy in the workers (issue 18,
-- common/core/decide_rounds.h): rounds of retriggers, and what every decision records of
-- the policy.
--
-- A round is one batch of retriggers asked for and waited on. Round 1 is retrig-classify's
-- (retrigger_sets.retrigger_count, ledger key "set:<id>", as before); with decide_policy =
-- adaptive, retrig-decide asks for rounds 2, 3, ... while the model wants more evidence.
-- Each later round goes the way round 1 does, exactly once: a Redis claim of its own
-- ("round:<id>:<r>"), then one call of decide_request_round below (the round's row, the
-- budget backstop, its ledger row "set:<id>:round:<r>", the set's count), then a retrigger
-- request naming the round, and retrig-retrigger's intent and outcome per (set_id, round).
--
-- Every decision, whatever the policy, stores the policy in force, adaptive's p_regression
-- with the history counts it used, the rounds and retriggers spent, and the verdict the
-- other policy gives on the same evidence (shadow), so that a project running seed sees
-- how often adaptive would have differed before switching.

-- ---- rounds ----

ALTER TABLE retrigger_sets
    ADD COLUMN round integer NOT NULL DEFAULT 1 CHECK (round >= 1),
    ADD COLUMN later_retriggers integer NOT NULL DEFAULT 0 CHECK (later_retriggers >= 0);
COMMENT ON COLUMN retrigger_sets.round IS
    'The latest round of retriggers asked for: 1 (retrig-classify''s, retrigger_count), then 2, 3, ... asked for by retrig-decide under decide_policy = adaptive (retrigger_rounds).';
COMMENT ON COLUMN retrigger_sets.later_retriggers IS
    'Retriggers asked for in rounds after the first (retrigger_rounds), less those of a round whose action failed; the set waits for retrigger_count + later_retriggers retriggers and found_count runs.';

CREATE TABLE retrigger_rounds (
    set_id       bigint           NOT NULL REFERENCES retrigger_sets (id) ON DELETE CASCADE,
    round        integer          NOT NULL CHECK (round >= 2),
    wanted       integer          NOT NULL CHECK (wanted >= 1),
    retriggers   integer          NOT NULL CHECK (retriggers >= 0),
    refused      boolean          NOT NULL DEFAULT false,
    p_regression double precision CHECK (p_regression >= 0 AND p_regression <= 1),
    platform     text             NOT NULL,
    day          date             NOT NULL,
    requested_at timestamptz      NOT NULL DEFAULT now(),
    published_at timestamptz,
    PRIMARY KEY (set_id, round),
    CHECK (refused = (retriggers = 0))
);
COMMENT ON TABLE retrigger_rounds IS
    'The rounds after the first of a retrigger set (decide_policy = adaptive): one row per round retrig-decide asked for, written with its ledger row (decide_request_round), before its retrigger request is published.';
COMMENT ON COLUMN retrigger_rounds.set_id IS 'The retrigger set.';
COMMENT ON COLUMN retrigger_rounds.round IS 'The round''s number: 2, 3, ... (round 1 is the set''s own retrigger_count).';
COMMENT ON COLUMN retrigger_rounds.wanted IS 'Retriggers the model asked for in this round (rt_decide_next_batch, at most 20).';
COMMENT ON COLUMN retrigger_rounds.retriggers IS
    'Retriggers the budget granted and the round asked retrig-retrigger for (the request''s times); 0 when refused.';
COMMENT ON COLUMN retrigger_rounds.refused IS
    'The budget (Redis claim or Postgres backstop) granted nothing: no request was made and no further round is asked for; the posterior decides (low-confidence).';
COMMENT ON COLUMN retrigger_rounds.p_regression IS 'The likeliest line''s p_regression when the round was asked for.';
COMMENT ON COLUMN retrigger_rounds.platform IS 'The platform whose daily budget paid for the round.';
COMMENT ON COLUMN retrigger_rounds.day IS 'The UTC day the round''s spend counts against.';
COMMENT ON COLUMN retrigger_rounds.requested_at IS 'When retrig-decide asked for the round.';
COMMENT ON COLUMN retrigger_rounds.published_at IS
    'When its retrigger request was published (message id retrigger-set-<id>-round-<r>); NULL until then (a redelivered decide request publishes it).';

GRANT SELECT ON retrigger_rounds TO retrig_sheriff;

-- retrig-retrigger's record: one intent and outcome per round.
ALTER TABLE retrigger_actions ADD COLUMN round integer NOT NULL DEFAULT 1 CHECK (round >= 1);
ALTER TABLE retrigger_actions DROP CONSTRAINT retrigger_actions_pkey;
ALTER TABLE retrigger_actions ADD CONSTRAINT retrigger_actions_pkey PRIMARY KEY (set_id, round);
COMMENT ON COLUMN retrigger_actions.round IS
    'The round of the set this action is for: 1 (retrig-classify''s request), 2, ... (retrigger_rounds); the hook is called at most once per (set_id, round).';
COMMENT ON COLUMN retrigger_actions.attempts IS
    'How many times the hook was called for this round of the set (1 when all went well).';
COMMENT ON COLUMN budget_ledger.idempotency_key IS
    'What was paid for, unique: "set:<retrigger_sets.id>" for a retrigger set''s first round, "set:<id>:round:<r>" for its later rounds, "perf-alert:<alert id>" for a performance backfill; a refund is "refund:" and the key it gives back.';

-- retrig-decide's request for round p_round of a set, in one call: nothing unless the set's
-- latest round is p_round - 1 and it is still open (stale); an existing round row is
-- returned as it is (a redelivery: created false); else the backstop under the (platform,
-- day) lock keeps what fits of p_claimed (what Redis granted of the p_wanted the model
-- asked for; at least p_minimum), and the round's row, its ledger row and the set's count
-- are written. A round Redis (p_claimed 0) or the backstop refuses is recorded (refused,
-- retriggers 0) so that no further round is asked for.
CREATE FUNCTION decide_request_round(p_set_id bigint, p_round integer, p_wanted integer,
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

-- ---- what every decision records of the policy ----

ALTER TABLE decisions
    ADD COLUMN policy                   text CHECK (policy IN ('seed', 'adaptive')),
    ADD COLUMN p_regression             double precision
                                        CHECK (p_regression >= 0 AND p_regression <= 1),
    ADD COLUMN prior_runs               integer CHECK (prior_runs >= 0),
    ADD COLUMN prior_failures           integer CHECK (prior_failures >= 0),
    ADD COLUMN prior_signature_failures integer CHECK (prior_signature_failures >= 0),
    ADD COLUMN rounds                   integer CHECK (rounds >= 0),
    ADD COLUMN retriggers               integer CHECK (retriggers >= 0),
    ADD COLUMN shadow_policy            text CHECK (shadow_policy IN ('seed', 'adaptive')),
    ADD COLUMN shadow_verdict           text
                                        CHECK (shadow_verdict IN ('regression', 'intermittent',
                                                                  'not-yet', 'undecided')),
    ADD COLUMN shadow_reason            text;
COMMENT ON COLUMN decisions.policy IS
    'The verdict policy in force when decided (decide_policy): seed (decide_threshold reproductions) or adaptive (the posterior of common/core/decide_model.h). NULL for decisions stored before migration 0024.';
COMMENT ON COLUMN decisions.p_regression IS
    'The adaptive model''s P(regression) of the likeliest line of the original, on the evidence decided on, whatever the policy in force (evidence lines[].p_regression has every line''s). NULL when no line was compared (no failure line, original logs unusable).';
COMMENT ON COLUMN decisions.prior_runs IS
    'History the model used for that line: runs of its test in the history window on other pushes, before the failure was seen.';
COMMENT ON COLUMN decisions.prior_failures IS 'History the model used for that line: failures of its test among prior_runs.';
COMMENT ON COLUMN decisions.prior_signature_failures IS
    'History the model used for that line: failures among prior_runs with the line''s own signature (they replace prior_failures in the model).';
COMMENT ON COLUMN decisions.rounds IS
    'Rounds of retriggers retrig asked for (a round: one batch asked for and waited on); 0 when the runs already on the push decided.';
COMMENT ON COLUMN decisions.retriggers IS 'Retriggers retrig asked for in all rounds (the budget spent; runs found on the push not included).';
COMMENT ON COLUMN decisions.shadow_policy IS 'The other policy: adaptive when seed is in force, seed when adaptive is.';
COMMENT ON COLUMN decisions.shadow_verdict IS
    'The verdict the other policy gives on the same evidence: regression, intermittent, undecided, or not-yet (it would have waited or asked for more retriggers; shadow_reason says which).';
COMMENT ON COLUMN decisions.shadow_reason IS 'The other policy''s reason (e.g. confident, need-more, reproduced, not-reproduced).';
