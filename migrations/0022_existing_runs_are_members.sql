-- SPDX-License-Identifier: MPL-2.0
-- 0022_existing_runs_are_members.sql - the runs of a failing label already on the push are
-- evidence (issue 17, item 1). An eligible failure always gets a set: the runs of the same
-- label on the same push that exist when it is made (pending, running or resolved, whoever
-- started them, often a sheriff's manual retriggers) join it as members of role 'found', and
-- retrig asks only for the missing ones, possibly none (retrigger_count 0). A found run that
-- had resolved already counts as evidence at once.

ALTER TABLE retrigger_sets DROP CONSTRAINT retrigger_sets_retrigger_count_check;
ALTER TABLE retrigger_sets ADD CONSTRAINT retrigger_sets_retrigger_count_check
    CHECK (retrigger_count >= 0);
ALTER TABLE retrigger_sets ADD COLUMN found_count integer NOT NULL DEFAULT 0
    CHECK (found_count >= 0);
COMMENT ON COLUMN retrigger_sets.retrigger_count IS
    'How many retriggers retrig asked for (0 when the runs already on the push were enough).';
COMMENT ON COLUMN retrigger_sets.found_count IS
    'Runs of the label that were already on the push when the set was made (members of role found).';

ALTER TABLE retrigger_set_members DROP CONSTRAINT retrigger_set_members_role_check;
ALTER TABLE retrigger_set_members ADD CONSTRAINT retrigger_set_members_role_check
    CHECK (role IN ('original', 'retrigger', 'found'));
COMMENT ON COLUMN retrigger_set_members.role IS
    'original: the failed run that started the set; retrigger: a run requested by retrig; found: a run of the label that was already on the push when the set was made.';

-- classify_create_set (0012) with the found runs: they are inserted with the set, and a set
-- that asks for nothing spends nothing (no backstop, no ledger row) but is made all the same.

-- classify_create_set: moved to sql/functions/20_classify_create_set.sql

