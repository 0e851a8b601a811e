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

CREATE FUNCTION budget_backstop(p_platform text, p_day text, p_limit integer,
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

CREATE FUNCTION classify_create_set(p_project text, p_revision text, p_label text,
                                    p_platform text, p_task_id text, p_run_id integer,
                                    p_count integer, p_failing_groups jsonb, p_failures jsonb,
                                    p_task_group_id text, p_task_queue_id text, p_day text,
                                    p_limit integer, p_minimum integer,
                                    OUT set_id bigint, OUT kept integer, OUT total integer,
                                    OUT refused boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    kept := 0;
    total := 0;
    refused := false;
    INSERT INTO retrigger_sets (project, revision, label, platform, original_task_id,
                                original_run_id, retrigger_count, failing_groups, failures,
                                task_group_id, task_queue_id)
    VALUES (p_project, p_revision, p_label, p_platform, p_task_id, p_run_id, p_count,
            p_failing_groups, p_failures, p_task_group_id, p_task_queue_id)
    ON CONFLICT ON CONSTRAINT retrigger_sets_project_revision_label_key DO NOTHING
    RETURNING id INTO set_id;
    IF set_id IS NULL THEN
        RETURN; -- the set exists: nothing written
    END IF;
    SELECT b.kept, b.total INTO kept, total
      FROM budget_backstop(p_platform, p_day, p_limit, p_count, p_minimum) b;
    IF kept = 0 THEN
        DELETE FROM retrigger_sets WHERE id = set_id; -- refused: nothing written
        set_id := NULL;
        refused := true;
        RETURN;
    END IF;
    IF kept < p_count THEN
        UPDATE retrigger_sets SET retrigger_count = kept WHERE id = set_id;
    END IF;
    INSERT INTO budget_ledger (platform, day, amount, idempotency_key, set_id, reason)
    VALUES (p_platform, p_day::date, kept, 'set:' || set_id, set_id, 'retrigger');
    UPDATE runs SET verdict = 'retrigger', verdict_reason = 'eligible', classified_at = now()
     WHERE task_id = p_task_id AND run_id = p_run_id AND verdict IS NULL;
END;
$$;
COMMENT ON FUNCTION classify_create_set(text, text, text, text, text, integer, integer, jsonb,
                                        jsonb, text, text, text, integer, integer) IS
    'retrig-classify: creates the (project, revision, label) retrigger set with its backstop, ledger row and run verdict in one call. set_id NULL: the set existed (refused false) or the backstop kept nothing (refused true, total = the ledger total).';
