/* SPDX-License-Identifier: MPL-2.0 */
/* ledger.c - the budget ledger's daily total and the per-(platform, day) budget backstop. */
#include "common/ledger.h"

#include <stdlib.h>

#define STR_(x) #x
#define STR(x)  STR_(x)

/* budget_daily is the ledger's total per platform and day (migration 0011, a trigger). */
static const char SQL_SPENT[] = "SELECT coalesce((SELECT spent FROM budget_daily"
                                " WHERE platform = $1 AND day = $2::date), 0)";
static const char SQL_LOCK[] =
    "SELECT pg_advisory_xact_lock(" STR(RT_LEDGER_LOCK_CLASS) ", hashtext($1 || '/' || $2))";

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
    const char *params[] = {platform, day};
    int rc = rt_pg_exec(pg, SQL_LOCK, 2, params, NULL);
    /* A statement of its own, after the lock: its snapshot holds every ledger row committed
     * before the lock was granted. */
    if (rc == RT_OK) rc = rt_ledger_spent(pg, platform, day, total);
    if (rc != RT_OK) return rc;
    int left = limit - *total;
    *kept = claimed <= left ? claimed : left > 0 && left >= minimum ? left : 0;
    return RT_OK;
}
