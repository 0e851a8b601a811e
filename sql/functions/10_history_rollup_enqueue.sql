-- SPDX-License-Identifier: MPL-2.0
-- 10_history_rollup_enqueue.sql - the function history_rollup_enqueue as it stands: `retrig
-- migrate` applies it whenever this file changes (sql/functions/README.md). Until the functions
-- left the migrations, it was last defined by migrations/0020_history_rollup.sql.
CREATE OR REPLACE FUNCTION history_rollup_enqueue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO history_rollup_queue (run_id, run_at, added)
    SELECT n.id, n.run_at, true FROM new_runs n
    ON CONFLICT (run_id) DO UPDATE SET added = true;
    RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER history_runs_rollup_enqueue AFTER INSERT ON history_runs
    REFERENCING NEW TABLE AS new_runs FOR EACH STATEMENT EXECUTE FUNCTION history_rollup_enqueue();
