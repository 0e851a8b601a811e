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
DROP FUNCTION classify_create_set(text, text, text, text, text, integer, integer, jsonb, jsonb,
                                  text, text, text, integer, integer);
CREATE FUNCTION classify_create_set(p_project text, p_revision text, p_label text,
                                    p_platform text, p_task_id text, p_run_id integer,
                                    p_count integer, p_failing_groups jsonb, p_failures jsonb,
                                    p_task_group_id text, p_task_queue_id text, p_day text,
                                    p_limit integer, p_minimum integer, p_found jsonb,
                                    OUT set_id bigint, OUT kept integer, OUT total integer,
                                    OUT refused boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    kept := 0;
    total := 0;
    refused := false;
    INSERT INTO retrigger_sets (project, revision, label, platform, original_task_id,
                                original_run_id, retrigger_count, failing_groups, failures,
                                task_group_id, task_queue_id, found_count)
    VALUES (p_project, p_revision, p_label, p_platform, p_task_id, p_run_id, p_count,
            p_failing_groups, p_failures, p_task_group_id, p_task_queue_id,
            jsonb_array_length(p_found))
    ON CONFLICT ON CONSTRAINT retrigger_sets_project_revision_label_key DO NOTHING
    RETURNING id INTO set_id;
    IF set_id IS NULL THEN
        RETURN; -- the set exists: nothing written
    END IF;
    IF p_count > 0 THEN
        SELECT b.kept, b.total INTO kept, total
          FROM budget_backstop(p_platform, p_day, p_limit, p_count, p_minimum) b;
        IF kept = 0 AND jsonb_array_length(p_found) = 0 THEN
            DELETE FROM retrigger_sets WHERE id = set_id; -- refused, and nothing to decide on
            set_id := NULL;
            refused := true;
            RETURN;
        END IF;
        IF kept < p_count THEN
            UPDATE retrigger_sets SET retrigger_count = kept WHERE id = set_id;
        END IF;
        IF kept > 0 THEN
            INSERT INTO budget_ledger (platform, day, amount, idempotency_key, set_id, reason)
            VALUES (p_platform, p_day::date, kept, 'set:' || set_id, set_id, 'retrigger');
        END IF;
    END IF;
    INSERT INTO retrigger_set_members (set_id, task_id, run_id, role, state, resolved_at)
    SELECT set_id, f.task_id, f.run_id, 'found', f.state,
           CASE WHEN f.state IN ('completed', 'failed', 'exception') THEN now() END
      FROM jsonb_to_recordset(p_found) AS f(task_id text, run_id integer, state text)
     WHERE f.state IN ('pending', 'running', 'completed', 'failed', 'exception')
    ON CONFLICT ON CONSTRAINT retrigger_set_members_set_task_run_key DO NOTHING;
    UPDATE runs SET verdict = 'retrigger', verdict_reason = 'eligible', classified_at = now()
     WHERE task_id = p_task_id AND run_id = p_run_id AND verdict IS NULL;
END;
$$;
COMMENT ON FUNCTION classify_create_set(text, text, text, text, text, integer, integer, jsonb,
                                        jsonb, text, text, text, integer, integer, jsonb) IS
    'retrig-classify: creates the (project, revision, label) retrigger set with the runs already on the push (p_found: [{task_id, run_id, state}], role found), its backstop and ledger row when it asks for retriggers, and the run verdict, in one call. set_id NULL: the set existed (refused false) or the backstop kept nothing and no run was found (refused true).';
