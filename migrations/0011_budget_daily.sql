-- SPDX-License-Identifier: MPL-2.0
-- 0011_budget_daily.sql - each platform's daily total of the budget ledger, kept by a trigger.
-- Before each claim the workers read what the ledger says a platform spent today (the
-- floor of the Redis counter, and the backstop under the per-platform-day advisory lock).
-- Summing the ledger's rows for that read grew with every row of the day: at 5,000 rows
-- (bench_classify's eligible path on one platform) it took 1 ms, twice per failure. The
-- total is now one row, changed in the same transaction as the ledger row, so it is
-- exactly as current as the ledger for any snapshot.
LOCK TABLE budget_ledger IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE budget_daily (
    platform text    NOT NULL,
    day      date    NOT NULL,
    spent    integer NOT NULL,
    PRIMARY KEY (platform, day)
);
COMMENT ON TABLE budget_daily IS
    'sum(amount) of budget_ledger per platform and day, kept by the budget_ledger_daily trigger; read it, never write it.';

INSERT INTO budget_daily (platform, day, spent)
SELECT platform, day, sum(amount) FROM budget_ledger GROUP BY platform, day;

CREATE FUNCTION budget_daily_follow() RETURNS trigger
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

CREATE TRIGGER budget_ledger_daily AFTER INSERT OR UPDATE OR DELETE ON budget_ledger
    FOR EACH ROW EXECUTE FUNCTION budget_daily_follow();
CREATE TRIGGER budget_ledger_daily_truncate AFTER TRUNCATE ON budget_ledger
    FOR EACH STATEMENT EXECUTE FUNCTION budget_daily_follow();
GRANT SELECT ON budget_daily TO retrig_sheriff;
