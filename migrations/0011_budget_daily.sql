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

-- budget_daily_follow: moved to sql/functions/10_budget_daily_follow.sql

-- trigger budget_ledger_daily: see sql/functions/10_budget_daily_follow.sql

-- trigger budget_ledger_daily_truncate: see sql/functions/10_budget_daily_follow.sql
GRANT SELECT ON budget_daily TO retrig_sheriff;
