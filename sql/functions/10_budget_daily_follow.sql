-- SPDX-License-Identifier: MPL-2.0
-- 10_budget_daily_follow.sql - the function budget_daily_follow as it stands: `retrig migrate`
-- applies it whenever this file changes (sql/functions/README.md). Until the functions left the
-- migrations, it was last defined by migrations/0011_budget_daily.sql.
CREATE OR REPLACE FUNCTION budget_daily_follow() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM budget_daily;
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE budget_daily SET spent = spent - OLD.amount
         WHERE platform = OLD.platform AND day = OLD.day;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO budget_daily (platform, day, spent) VALUES (NEW.platform, NEW.day, NEW.amount)
        ON CONFLICT (platform, day) DO UPDATE SET spent = budget_daily.spent + EXCLUDED.spent;
    END IF;
    RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER budget_ledger_daily AFTER INSERT OR UPDATE OR DELETE ON budget_ledger
    FOR EACH ROW EXECUTE FUNCTION budget_daily_follow();
CREATE OR REPLACE TRIGGER budget_ledger_daily_truncate AFTER TRUNCATE ON budget_ledger
    FOR EACH STATEMENT EXECUTE FUNCTION budget_daily_follow();
