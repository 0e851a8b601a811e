-- SPDX-License-Identifier: MPL-2.0
-- 0035_pooled_sets.sql - decide_policy = pooled (issue 32): one verdict per failing test per
-- push over every configuration where the test ran (common/core/decide_pool.h).
--
-- A pooled set is one failing test on one push: the first failing task of the test opens it
-- (retrig-classify), later ones join it, each through its own retrigger set (asking for no
-- retrigger at first). retrig-decide waits for the settle window, reads the other
-- configurations' runs of the test's group on the push from the test history, and decides
-- the pooled verdict or asks for the retriggers the model picks, each a round of the member
-- set of that configuration (retrigger_rounds, decide_request_round: exactly once, within the
-- platform's budget). Every member set's decision points at the pooled set.

CREATE TABLE pooled_sets (
    id                bigserial   PRIMARY KEY,
    project           text        NOT NULL,
    revision          text        NOT NULL,
    test              text        NOT NULL,
    group_name        text,
    state             text        NOT NULL DEFAULT 'settling'
                                  CHECK (state IN ('settling', 'open', 'decided')),
    opened_at         timestamptz NOT NULL DEFAULT now(),
    settle_until      timestamptz NOT NULL,
    deadline_at       timestamptz NOT NULL,
    rounds            integer     NOT NULL DEFAULT 0 CHECK (rounds >= 0),
    retriggers        integer     NOT NULL DEFAULT 0 CHECK (retriggers >= 0),
    p_regression      double precision CHECK (p_regression >= 0 AND p_regression <= 1),
    verdict           text        CHECK (verdict IN ('regression', 'intermittent', 'undecided')),
    reason            text,
    evidence          jsonb,
    decided_at        timestamptz,
    wake_requested_at timestamptz,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project, revision, test)
);
CREATE INDEX pooled_sets_open_idx ON pooled_sets (settle_until) WHERE state <> 'decided';

COMMENT ON TABLE pooled_sets IS
    'decide_policy = pooled: one row per (project, revision, failing test), opened by the test''s first failing task on the push; its verdict is every member set''s.';
COMMENT ON COLUMN pooled_sets.test IS 'The failing test (the errorsummary failure''s test of the task that opened it).';
COMMENT ON COLUMN pooled_sets.group_name IS
    'The test''s group (manifest), whose results on the push (history_groups) say where the test ran and passed; NULL when the failure named none.';
COMMENT ON COLUMN pooled_sets.state IS
    'settling: waiting for settle_until (decide_pool_settle_s) for the other configurations; open: evaluated, waiting for the retriggers asked for; decided.';
COMMENT ON COLUMN pooled_sets.settle_until IS 'opened_at + decide_pool_settle_s: the first evaluation is not before.';
COMMENT ON COLUMN pooled_sets.deadline_at IS
    'opened_at + decide_pool_deadline_minutes: past it the pooled set decides with the evidence it has.';
COMMENT ON COLUMN pooled_sets.rounds IS 'Rounds of retriggers asked for (each over one or more member sets).';
COMMENT ON COLUMN pooled_sets.retriggers IS 'Retriggers the model asked for in all rounds, over all configurations (what decide_max_retriggers caps).';
COMMENT ON COLUMN pooled_sets.p_regression IS 'The pooled posterior P(regression) at the latest evaluation.';
COMMENT ON COLUMN pooled_sets.evidence IS
    'The latest evaluation: {configs: [{config, set_id, push_run, retriggers, reproduced, pending}], p_regression, verdict, reason, more}.';
COMMENT ON COLUMN pooled_sets.wake_requested_at IS 'When the deadline sweeper last asked retrig-decide to look at it.';

CREATE TABLE pooled_set_members (
    pool_id     bigint      NOT NULL REFERENCES pooled_sets (id) ON DELETE CASCADE,
    set_id      bigint      NOT NULL REFERENCES retrigger_sets (id) ON DELETE CASCADE,
    config      text        NOT NULL,
    retriggers  integer     NOT NULL DEFAULT 0 CHECK (retriggers >= 0),
    reproduced  integer     NOT NULL DEFAULT 0 CHECK (reproduced >= 0),
    unusable    integer     NOT NULL DEFAULT 0 CHECK (unusable >= 0),
    asked_round integer     NOT NULL DEFAULT 0 CHECK (asked_round >= 0),
    asked       integer     NOT NULL DEFAULT 0 CHECK (asked >= 0),
    set_round   integer     NOT NULL DEFAULT 0 CHECK (set_round >= 0),
    joined_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (pool_id, set_id),
    UNIQUE (set_id)
);
COMMENT ON TABLE pooled_set_members IS
    'The failing tasks of a pooled set: one retrigger set each (one configuration), joined exactly once.';
COMMENT ON COLUMN pooled_set_members.config IS 'The configuration: the platform and the build type of the task''s label (linux1804-64/debug).';
COMMENT ON COLUMN pooled_set_members.retriggers IS
    'Runs of the set (retriggers and runs found on the push) that gave evidence, as the set''s latest look found them.';
COMMENT ON COLUMN pooled_set_members.reproduced IS 'Of which failed with the pooled set''s test.';
COMMENT ON COLUMN pooled_set_members.unusable IS 'Runs that gave no evidence (exception, logs unusable).';
COMMENT ON COLUMN pooled_set_members.asked_round IS 'The pooled set''s round that last asked this configuration for retriggers (0: none).';
COMMENT ON COLUMN pooled_set_members.asked IS 'How many that round asked for.';
COMMENT ON COLUMN pooled_set_members.set_round IS
    'The member set''s round (retrigger_rounds) that carries them: asked exactly once by decide_request_round.';

ALTER TABLE decisions ADD COLUMN pool_id bigint REFERENCES pooled_sets (id) ON DELETE SET NULL;
COMMENT ON COLUMN decisions.pool_id IS
    'decide_policy = pooled: the pooled set whose verdict this is (its evidence has every configuration''s).';
ALTER TABLE decisions DROP CONSTRAINT IF EXISTS decisions_policy_check;
ALTER TABLE decisions ADD CONSTRAINT decisions_policy_check
    CHECK (policy IN ('seed', 'adaptive', 'pooled'));
