-- SPDX-License-Identifier: MPL-2.0
-- 0012_set_creation_in_one_call.sql - the budget backstop and the creation of a retrigger set
-- as functions, so that a worker makes one round trip where it made seven.
--
-- budget_backstop is what common/ledger.c did in two statements: take the (platform, day)
-- transaction advisory lock, then read the day's total in a statement of its own. A VOLATILE
-- plpgsql function takes a fresh snapshot for each statement it runs, so under READ
-- COMMITTED the total read after the lock holds every ledger row committed before the lock
-- was granted, exactly as before. The lock keys are unchanged: class 7274
-- (RT_LEDGER_LOCK_CLASS), hashtext(platform || '/' || day) with day as the text
-- 'YYYY-MM-DD' the workers send (never a date cast back to text, which DateStyle changes).
--
-- classify_create_set is retrig-classify's set transaction: insert the set (nothing when the
-- (project, revision, label) set exists), run the backstop, lower the set's count to what it
-- kept, write the ledger row and the run's verdict. When the backstop keeps nothing, the set
-- row it inserted is deleted again, so nothing is written, as the rollback did before.

-- budget_backstop: moved to sql/functions/10_budget_backstop.sql

-- classify_create_set: see sql/functions/20_classify_create_set.sql

