-- SPDX-License-Identifier: MPL-2.0
-- 20_classify_create_set.sql - the function classify_create_set as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0022_existing_runs_are_members.sql.
CREATE OR REPLACE FUNCTION classify_create_set(p_project text, p_revision text, p_label text,
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
