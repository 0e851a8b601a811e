/* SPDX-License-Identifier: MPL-2.0 */
/* ledger.c - the budget ledger's daily total and the per-(platform, day) budget backstop. */
#include "common/store/ledger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io/log.h"
#include "common/store/rows.h"

/* budget_daily is the ledger's total per platform and day (migration 0011, a trigger). */
static const char SQL_SPENT[] = "SELECT coalesce((SELECT spent FROM budget_daily"
                                " WHERE platform = $1 AND day = $2::date), 0)";
/* The lock and the read after it, in one call (migration 0012). */
static const char SQL_BACKSTOP[] =
    "SELECT kept, total FROM budget_backstop($1, $2, $3::integer, $4::integer, $5::integer)";
enum { B_KEPT, B_TOTAL, B_N };
static const char *const BACKSTOP_COLS[B_N] = {"kept", "total"};
static const char SQL_LEDGER_ENTRY[] =
    "SELECT platform, day::text AS day, amount FROM budget_ledger WHERE idempotency_key = $1";
enum { LE_PLATFORM, LE_DAY, LE_AMOUNT, LE_N };
static const char *const LEDGER_ENTRY_COLS[LE_N] = {"platform", "day", "amount"};
static const char SQL_LEDGER_REFUND[] =
    "INSERT INTO budget_ledger (platform, day, amount, idempotency_key, set_id, reason)"
    " VALUES ($1, $2::date, -$3::integer, $4, $5::bigint, $6)"
    " ON CONFLICT (idempotency_key) DO NOTHING RETURNING id";

int rt_ledger_spent(rt_pg *pg, const char *platform, const char *day, int *spent)
{
    const char *params[] = {platform, day};
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, SQL_SPENT, 2, params, &res);
    if (rc != RT_OK) return rc;
    *spent = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    return RT_OK;
}

int rt_ledger_backstop(rt_pg *pg, const char *platform, const char *day, int limit, int claimed,
                       int minimum, int *kept, int *total)
{
    *kept = 0;
    *total = 0;
    char limit_text[16], claimed_text[16], minimum_text[16];
    snprintf(limit_text, sizeof limit_text, "%d", limit);
    snprintf(claimed_text, sizeof claimed_text, "%d", claimed);
    snprintf(minimum_text, sizeof minimum_text, "%d", minimum);
    const char *params[] = {platform, day, limit_text, claimed_text, minimum_text};
    PGresult *res = NULL;
    int c[B_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_exec(pg, SQL_BACKSTOP, 5, params, &res);
    if (rc != RT_OK) return rc;
    if (rt_pg_columns(res, BACKSTOP_COLS, B_N, c, errstr) != RT_OK) {
        rt_log_error("cannot read the budget backstop", "error", errstr);
        PQclear(res);
        return RT_EINVAL;
    }
    *kept = atoi(PQgetvalue(res, 0, c[B_KEPT]));
    *total = atoi(PQgetvalue(res, 0, c[B_TOTAL]));
    PQclear(res);
    return RT_OK;
}

int rt_ledger_refund_row(rt_pg *pg, const char *key, const char *refund_key, long long set_id,
                         const char *reason, rt_ledger_refund *out)
{
    const char *params[] = {key};
    PGresult *res = NULL;
    int c[LE_N];
    memset(out, 0, sizeof *out);
    int rc = rt_pg_exec(pg, SQL_LEDGER_ENTRY, 1, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, LEDGER_ENTRY_COLS, LE_N, c);
    if (rc != RT_OK) return rc;
    out->spent = PQntuples(res) == 1;
    if (out->spent) {
        snprintf(out->platform, sizeof out->platform, "%s", PQgetvalue(res, 0, c[LE_PLATFORM]));
        snprintf(out->day, sizeof out->day, "%s", PQgetvalue(res, 0, c[LE_DAY]));
        out->amount = atoi(PQgetvalue(res, 0, c[LE_AMOUNT]));
    }
    PQclear(res);
    if (!out->spent) return RT_OK;
    char amount[16], set[24];
    snprintf(amount, sizeof amount, "%d", out->amount);
    snprintf(set, sizeof set, "%lld", set_id);
    const char *rparams[] = {out->platform, out->day, amount, refund_key, set, reason};
    res = NULL;
    rc = rt_pg_exec(pg, SQL_LEDGER_REFUND, 6, rparams, &res);
    out->inserted = rc == RT_OK && PQntuples(res) == 1;
    PQclear(res);
    return rc;
}

/* The sheriffs' page's budget charts (cli/report_decisions.c). */
static const char SQL_DAYS[] =
    "SELECT l.platform, to_char(l.day, 'YYYY-MM-DD') AS day, sum(l.amount)::bigint AS spent,"
    " count(*) AS entries"
    " FROM budget_ledger l WHERE l.day > ($1::timestamptz AT TIME ZONE 'UTC')::date - $2::integer"
    " AND l.day <= ($1::timestamptz AT TIME ZONE 'UTC')::date"
    " GROUP BY 1, 2 ORDER BY 1, 2";
static const rt_row_field DAY_FIELDS[] = {
    RT_ROW_FIELD(rt_ledger_day, platform, RT_ROW_TEXT, "platform"),
    RT_ROW_FIELD(rt_ledger_day, day, RT_ROW_TEXT, "day"),
    RT_ROW_FIELD(rt_ledger_day, spent, RT_ROW_INT, "spent"),
    RT_ROW_FIELD(rt_ledger_day, entries, RT_ROW_INT, "entries"),
};
static const rt_row_spec DAY_SPEC = {DAY_FIELDS, 4, sizeof(rt_ledger_day)};

int rt_ledger_days(rt_pg *pg, const char *until, int days, rt_ledger_day **rows, size_t *n)
{
    char days_text[16];
    snprintf(days_text, sizeof days_text, "%d", days);
    const char *params[] = {until, days_text};
    return rt_store_rows(pg, SQL_DAYS, 2, params, &DAY_SPEC, rows, n);
}

void rt_ledger_day_free(rt_ledger_day *rows, size_t n) { rt_store_rows_free(&DAY_SPEC, rows, n); }
