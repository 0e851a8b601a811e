/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_searches.c - retrig-decide's statements on culprit searches (culprit_searches.h).
 * Moved from workers/decide/culprit_flow.c (issue 33): the statements are unchanged but for
 * the claim's batch, now a parameter. */
#include "common/store/culprit_searches.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/store/rows.h"

/* The searches due, claimed by moving culprit_checked_at (a replica skips them then). */
static const char SQL_CLAIM[] =
    "UPDATE decisions d SET culprit_checked_at = now() FROM retrigger_sets s"
    " WHERE s.id = d.set_id AND d.set_id IN (SELECT set_id FROM decisions"
    "   WHERE culprit_status = 'searching'"
    "   AND (culprit_checked_at IS NULL"
    "        OR culprit_checked_at < now() - make_interval(secs => $1::integer))"
    "   ORDER BY culprit_checked_at NULLS FIRST, set_id LIMIT $2::integer"
    "   FOR UPDATE SKIP LOCKED)"
    " RETURNING d.set_id, s.project, s.revision, s.label, d.evidence::text AS evidence,"
    " coalesce(s.platform, 'unknown') AS platform,"
    " coalesce(d.culprit_window::text, '') AS culprit_window, d.culprit_jobs_spent,"
    " coalesce(d.culprit_range_first, '') AS culprit_range_first,"
    " coalesce(d.culprit_range_last, '') AS culprit_range_last,"
    " coalesce(to_char(d.failure_seen_at AT TIME ZONE 'UTC',"
    "                  'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), '') AS failure_seen_at";
#define C(member, kind, column) RT_ROW_FIELD(rt_culprit_claimed, member, RT_ROW_##kind, column)
static const rt_row_field CLAIM_FIELDS[] = {
    C(set_id, TEXT, "set_id"),
    C(project, TEXT, "project"),
    C(revision, TEXT, "revision"),
    C(label, TEXT, "label"),
    C(evidence, TEXT, "evidence"),
    C(platform, TEXT, "platform"),
    C(window, TEXT, "culprit_window"),
    C(jobs_spent, INT, "culprit_jobs_spent"),
    C(range_first, TEXT, "culprit_range_first"),
    C(range_last, TEXT, "culprit_range_last"),
    C(failure_seen_at, TEXT, "failure_seen_at"),
};
#undef C
static const rt_row_spec CLAIM_SPEC = {CLAIM_FIELDS, sizeof CLAIM_FIELDS / sizeof *CLAIM_FIELDS,
                                       sizeof(rt_culprit_claimed)};
static const char SQL_PROBE_ROW[] =
    "SELECT attempt, state, coalesce(error, '') AS error FROM culprit_pending_probes"
    " WHERE set_id = $1::bigint AND revision = $2";
enum { PROBE_ATTEMPT, PROBE_STATE, PROBE_ERROR, PROBE_N };
static const char *const PROBE_ROW_COLS[PROBE_N] = {
    [PROBE_ATTEMPT] = "attempt", [PROBE_STATE] = "state", [PROBE_ERROR] = "error"};
static const char SQL_PROBE_DONE[] =
    "UPDATE culprit_pending_probes SET state = 'done', done_at = now()"
    " WHERE set_id = $1::bigint AND revision = $2 AND attempt = $3::integer"
    " AND state = 'triggered'";
/* A step of a search under way: its window, probes and spend, its status once over. */
static const char SQL_UPDATE[] =
    "UPDATE decisions SET culprit_window = $2::jsonb, culprit_probes = $3::jsonb,"
    " culprit_jobs_spent = $4::integer, culprit_status = $5, culprit_reason = $6,"
    " culprit_revision = $7, culprit_pushlog_id = $8::bigint, culprit_author = $9,"
    " culprit_url = $10, culprit_range_first = $11, culprit_range_last = $12,"
    " culprit_updated_at = now()"
    " WHERE set_id = $1::bigint AND culprit_status = 'searching' RETURNING set_id";
static const char SQL_STORE[] =
    "UPDATE decisions SET culprit_window = $2::jsonb, culprit_status = $3, culprit_reason = $4,"
    " culprit_revision = $5, culprit_pushlog_id = $6::bigint, culprit_author = $7,"
    " culprit_url = $8, culprit_range_first = $9, culprit_range_last = $10,"
    " culprit_updated_at = now()"
    " WHERE set_id = $1::bigint AND culprit_status = 'searching' AND culprit_window IS NULL"
    " RETURNING set_id";
static const char SQL_STOP[] =
    "UPDATE decisions SET culprit_status = 'stopped', culprit_reason = $2,"
    " culprit_updated_at = now() WHERE set_id = $1::bigint AND culprit_status = 'searching'"
    " RETURNING set_id";

int rt_culprit_searches_claim(rt_pg *pg, int interval_s, int batch, rt_culprit_claimed **rows,
                              size_t *n)
{
    char interval[16], limit[16];
    snprintf(interval, sizeof interval, "%d", interval_s);
    snprintf(limit, sizeof limit, "%d", batch);
    const char *params[] = {interval, limit};
    return rt_store_rows(pg, SQL_CLAIM, 2, params, &CLAIM_SPEC, rows, n);
}

void rt_culprit_claimed_free(rt_culprit_claimed *rows, size_t n)
{
    rt_store_rows_free(&CLAIM_SPEC, rows, n);
}

int rt_culprit_searches_probe(rt_pg *pg, const char *set_id, const char *revision, int *attempt,
                              char state[16], char *error, size_t error_size, bool *found)
{
    const char *params[] = {set_id, revision};
    PGresult *res = NULL;
    int c[PROBE_N];
    int rc = rt_pg_exec(pg, SQL_PROBE_ROW, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, PROBE_ROW_COLS, PROBE_N, c);
    if (rc != RT_OK) return rc;
    *found = PQntuples(res) == 1;
    if (*found) {
        *attempt = atoi(PQgetvalue(res, 0, c[PROBE_ATTEMPT]));
        snprintf(state, 16, "%s", PQgetvalue(res, 0, c[PROBE_STATE]));
        snprintf(error, error_size, "%s", PQgetvalue(res, 0, c[PROBE_ERROR]));
    }
    PQclear(res);
    return RT_OK;
}

int rt_culprit_searches_probe_done(rt_pg *pg, const char *set_id, const char *revision, int attempt)
{
    char text[16];
    snprintf(text, sizeof text, "%d", attempt);
    const char *params[] = {set_id, revision, text};
    return rt_pg_exec(pg, SQL_PROBE_DONE, 3, params, NULL);
}

/* An exactly-once write (RETURNING set_id): *changed when it changed the row. */
static int changed_row(rt_pg *pg, const char *sql, int n, const char *const *params, bool *changed)
{
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, sql, n, params, &res);
    *changed = rc == RT_OK && PQntuples(res) == 1;
    PQclear(res);
    return rc;
}

int rt_culprit_searches_store_window(rt_pg *pg, const rt_culprit_stored *s, bool *changed)
{
    const char *params[] = {s->set_id,     s->window, s->status, s->reason,      s->revision,
                            s->pushlog_id, s->author, s->url,    s->range_first, s->range_last};
    return changed_row(pg, SQL_STORE, 10, params, changed);
}

int rt_culprit_searches_step(rt_pg *pg, const rt_culprit_stored *s, bool *changed)
{
    const char *params[] = {s->set_id, s->window, s->probes,      s->jobs_spent,
                            s->status, s->reason, s->revision,    s->pushlog_id,
                            s->author, s->url,    s->range_first, s->range_last};
    return changed_row(pg, SQL_UPDATE, 12, params, changed);
}

int rt_culprit_searches_stop(rt_pg *pg, const char *set_id, const char *reason, bool *changed)
{
    const char *params[] = {set_id, reason};
    return changed_row(pg, SQL_STOP, 2, params, changed);
}
