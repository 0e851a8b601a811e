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

-- decide_request_round: moved to sql/functions/20_decide_request_round.sql

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
