/* SPDX-License-Identifier: MPL-2.0 */
/* runs.c - the runs table's statements and their readers (runs.h). Moved from
 * workers/classify/main.c (issue 33): the statements are unchanged. */
#include "common/store/runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SQL_RECORD_RUN[] =
    "INSERT INTO runs (task_id, run_id, state, reason_resolved, task_queue_id, task_group_id,"
    " project, revision, label, scheduled_at, started_at, resolved_at)"
    " VALUES ($1, $2::integer, $3, $4, $5, $6, $7, $8, $9, $10::timestamptz, $11::timestamptz,"
    " $12::timestamptz)"
    " ON CONFLICT (task_id, run_id) DO NOTHING";
static const char SQL_RUN_VERDICT[] =
    "UPDATE runs SET verdict = $3, verdict_reason = $4, classified_at = now()"
    " WHERE task_id = $1 AND run_id = $2::integer AND verdict IS NULL";
/* One array per column, so the statement is short and the same for every batch. */
static const char SQL_RECORD_BATCH[] =
    "WITH v AS ("
    "  SELECT * FROM unnest($1::bigint[], $2::text[], $3::integer[], $4::text[], $5::text[],"
    "   $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::timestamptz[],"
    "   $12::timestamptz[], $13::timestamptz[], $14::text[], $15::text[])"
    "   AS v(i, task_id, run_id, state, reason_resolved, task_queue_id, task_group_id, project,"
    "   revision, label, scheduled_at, started_at, resolved_at, verdict, verdict_reason)),"
    " member AS ("
    "  SELECT v.i FROM v WHERE v.verdict IS NOT NULL AND CASE"
    "   WHEN v.project IS NOT NULL AND v.revision IS NOT NULL AND v.label IS NOT NULL"
    "   THEN EXISTS (SELECT 1 FROM retrigger_sets s WHERE s.project = v.project"
    "    AND s.revision = v.revision AND s.label = v.label)"
    "   ELSE EXISTS (SELECT 1 FROM retrigger_sets s WHERE s.task_group_id = v.task_group_id)"
    "   END),"
    " ins AS ("
    "  INSERT INTO runs (task_id, run_id, state, reason_resolved, task_queue_id, task_group_id,"
    "   project, revision, label, scheduled_at, started_at, resolved_at, verdict,"
    "   verdict_reason, classified_at)"
    "  SELECT task_id, run_id, state, reason_resolved, task_queue_id, task_group_id, project,"
    "   revision, label, scheduled_at, started_at, resolved_at, verdict, verdict_reason,"
    "   CASE WHEN verdict IS NOT NULL THEN now() END"
    "  FROM v WHERE v.i NOT IN (SELECT i FROM member)"
    "  ON CONFLICT (task_id, run_id) DO NOTHING)"
    " SELECT i FROM member";
#define BATCH_COLUMNS 15
enum { RB_I, RB_N };
static const char *const RECORD_BATCH_COLS[RB_N] = {"i"};

int rt_runs_record(rt_pg *pg, const rt_run_record *r)
{
    char run[16];
    snprintf(run, sizeof run, "%d", r->run_id);
    const char *params[] = {
        r->task_id, run,         r->state, r->reason_resolved, r->task_queue_id, r->task_group_id,
        r->project, r->revision, r->label, r->scheduled_at,    r->started_at,    r->resolved_at};
    return rt_pg_exec(pg, SQL_RECORD_RUN, 12, params, NULL);
}

int rt_runs_set_verdict(rt_pg *pg, const char *task_id, int run_id, const char *verdict,
                        const char *verdict_reason)
{
    char run[16];
    snprintf(run, sizeof run, "%d", run_id);
    const char *params[] = {task_id, run, verdict, verdict_reason};
    return rt_pg_exec(pg, SQL_RUN_VERDICT, 4, params, NULL);
}

int rt_runs_record_batch(rt_pg *pg, const rt_run_record *rows, size_t n, bool *maybe_member)
{
    rt_pg_array cols[BATCH_COLUMNS] = {0};
    bool ok = true;
    for (size_t i = 0; i < n; i++) maybe_member[i] = false;
    for (size_t i = 0; i < n && ok; i++) {
        const rt_run_record *t = &rows[i];
        if (!t->task_id) continue;
        char index[24], run[16];
        snprintf(index, sizeof index, "%zu", i);
        snprintf(run, sizeof run, "%d", t->run_id);
        const char *row[BATCH_COLUMNS] = {index,
                                          t->task_id,
                                          run,
                                          t->state,
                                          t->reason_resolved,
                                          t->task_queue_id,
                                          t->task_group_id,
                                          t->project,
                                          t->revision,
                                          t->label,
                                          t->scheduled_at,
                                          t->started_at,
                                          t->resolved_at,
                                          t->verdict,
                                          t->verdict_reason};
        for (size_t c = 0; c < BATCH_COLUMNS && ok; c++)
            ok = rt_pg_array_add(&cols[c], row[c]) == RT_OK; /* copies the text */
    }
    const char *params[BATCH_COLUMNS];
    for (size_t c = 0; c < BATCH_COLUMNS && ok; c++)
        ok = (params[c] = rt_pg_array_text(&cols[c])) != NULL;
    PGresult *res = NULL;
    int rc = ok ? rt_pg_exec(pg, SQL_RECORD_BATCH, BATCH_COLUMNS, params, &res) : RT_ENOMEM;
    for (size_t c = 0; c < BATCH_COLUMNS; c++) rt_pg_array_free(&cols[c]);
    int c[RB_N];
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, RECORD_BATCH_COLS, RB_N, c);
    if (rc != RT_OK) return rc;
    for (int row = 0; row < PQntuples(res); row++) {
        size_t i = (size_t)atoll(PQgetvalue(res, row, c[RB_I]));
        if (i < n) maybe_member[i] = true;
    }
    PQclear(res);
    return RT_OK;
}
