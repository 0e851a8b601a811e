/* SPDX-License-Identifier: MPL-2.0 */
/* github.c - the statements of `retrig collect-github` (github.h). Moved from
 * cli/collect_github.c (issue 33): the statements are unchanged. */
#include "common/store/github.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

// clang-format off
static const char SQL_STATE_GET[] =
    "SELECT " TS("newest_created_at") " AS newest FROM github_collect_state"
    " WHERE repository = $1 AND workflow = $2";
// clang-format on
static const char SQL_STATE_START[] =
    "INSERT INTO github_collect_state (repository, workflow, last_pass_started)"
    " VALUES ($1, $2, now()) ON CONFLICT (repository, workflow)"
    " DO UPDATE SET last_pass_started = now()";
static const char SQL_STATE_FINISH[] =
    "UPDATE github_collect_state SET last_stop_reason = $3,"
    " last_pass_finished = CASE WHEN $3::text IS NULL THEN now() ELSE last_pass_finished END"
    " WHERE repository = $1 AND workflow = $2";
static const char SQL_STATE_RUN[] =
    "UPDATE github_collect_state SET runs_stored = runs_stored + 1,"
    " newest_run_id = CASE WHEN newest_created_at IS NULL"
    "                   OR to_timestamp($4::bigint) > newest_created_at"
    "                 THEN $3::bigint ELSE newest_run_id END,"
    " newest_created_at = GREATEST(newest_created_at, to_timestamp($4::bigint))"
    " WHERE repository = $1 AND workflow = $2";
static const char SQL_ATTEMPTS_KNOWN[] =
    "SELECT attempt, extract(epoch FROM run_started_at)::bigint AS started FROM github_runs"
    " WHERE repository = $1 AND run_id = $2::bigint";
enum { K_ATTEMPT, K_STARTED, K_N };
static const char *const ATTEMPTS_KNOWN_COLS[K_N] = {"attempt", "started"};
static const char SQL_INSERT_RUN[] =
    "INSERT INTO github_runs (repository, run_id, attempt, workflow_id, workflow_path,"
    " workflow_name, event, conclusion, head_branch, head_sha, head_repository, pr, branch_key,"
    " main, html_url, created_at, run_started_at, artifacts, expired_artifacts, junit_files,"
    " outcomes, author_association)"
    " VALUES ($1, $2::bigint, $3::integer, $4::bigint, $5, $6, $7, $8, $9, $10, $11,"
    " $12::integer, $13, $14::boolean, $15, to_timestamp($16::bigint), to_timestamp($17::bigint),"
    " $18::integer, $19::integer, $20::integer, $21::integer, $22)"
    " ON CONFLICT DO NOTHING RETURNING attempt";
static const char SQL_GAP[] =
    "INSERT INTO github_run_gaps (repository, run_id, attempt, kind, artifact, file, detail)"
    " VALUES ($1, $2::bigint, $3::integer, $4, $5, $6, $7) ON CONFLICT DO NOTHING";
static const char SQL_FILE[] =
    "INSERT INTO github_run_files (history_run_id, repository, run_id, attempt, artifact, file)"
    " SELECT id, $1, $3::bigint, $4::integer, $5, $6 FROM history_runs"
    " WHERE source = 'github' AND project = $1 AND run_key = $2 ON CONFLICT DO NOTHING";
static const char SQL_ETAG_GET[] = "SELECT etag FROM github_etags WHERE url = $1";
static const char SQL_ETAG_PUT[] =
    "INSERT INTO github_etags (url, etag) VALUES ($1, $2)"
    " ON CONFLICT (url) DO UPDATE SET etag = EXCLUDED.etag, updated_at = now()";

int rt_gh_store_newest(rt_pg *pg, const char *repository, const char *workflow, char newest[32],
                       bool *known)
{
    const char *params[] = {repository, workflow};
    PGresult *res = NULL;
    *known = false;
    newest[0] = '\0';
    int rc = rt_pg_exec(pg, SQL_STATE_GET, 2, params, &res);
    if (rc != RT_OK) return rc;
    if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0)) {
        snprintf(newest, 32, "%s", PQgetvalue(res, 0, 0));
        *known = true;
    }
    PQclear(res);
    return RT_OK;
}

int rt_gh_store_pass_started(rt_pg *pg, const char *repository, const char *workflow)
{
    const char *params[] = {repository, workflow};
    return rt_pg_exec(pg, SQL_STATE_START, 2, params, NULL);
}

int rt_gh_store_pass_finished(rt_pg *pg, const char *repository, const char *workflow,
                              const char *stop_reason)
{
    const char *params[] = {repository, workflow, stop_reason};
    return rt_pg_exec(pg, SQL_STATE_FINISH, 3, params, NULL);
}

int rt_gh_store_attempts(rt_pg *pg, const char *repository, long long run_id, int n, bool *known,
                         time_t *starts)
{
    char id[24];
    snprintf(id, sizeof id, "%lld", run_id);
    const char *params[] = {repository, id};
    PGresult *res = NULL;
    int col[K_N];
    int rc = rt_pg_exec(pg, SQL_ATTEMPTS_KNOWN, 2, params, &res);
    if (rc == RT_OK) rc = rt_pg_result_columns(&res, ATTEMPTS_KNOWN_COLS, K_N, col);
    if (rc != RT_OK) return rc;
    for (int r = 0; r < PQntuples(res); r++) {
        int a = atoi(PQgetvalue(res, r, col[K_ATTEMPT]));
        if (a >= 1 && a <= n) {
            known[a - 1] = true;
            starts[a - 1] = (time_t)atoll(PQgetvalue(res, r, col[K_STARTED]));
        }
    }
    PQclear(res);
    return RT_OK;
}

int rt_gh_store_run(rt_pg *pg, const rt_gh_run_row *r, bool *fresh)
{
    const char *params[] = {r->repository,
                            r->run_id,
                            r->attempt,
                            r->workflow_id,
                            r->workflow_path,
                            r->workflow_name,
                            r->event,
                            r->conclusion,
                            r->head_branch,
                            r->head_sha,
                            r->head_repository,
                            r->pr,
                            r->branch_key,
                            r->main ? "t" : "f",
                            r->html_url,
                            r->created_at,
                            r->run_started_at,
                            r->artifacts,
                            r->expired_artifacts,
                            r->junit_files,
                            r->outcomes,
                            r->author_association};
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, SQL_INSERT_RUN, 22, params, &res);
    *fresh = rc == RT_OK && PQntuples(res) == 1;
    PQclear(res);
    return rc;
}

int rt_gh_store_file(rt_pg *pg, const char *repository, const char *run_key, const char *run_id,
                     const char *attempt, const char *artifact, const char *file)
{
    const char *params[] = {repository, run_key, run_id, attempt, artifact, file};
    return rt_pg_exec(pg, SQL_FILE, 6, params, NULL);
}

int rt_gh_store_gap(rt_pg *pg, const char *repository, const char *run_id, const char *attempt,
                    const char *kind, const char *artifact, const char *file, const char *detail)
{
    const char *params[] = {repository, run_id, attempt, kind, artifact, file, detail};
    return rt_pg_exec(pg, SQL_GAP, 7, params, NULL);
}

int rt_gh_store_run_counted(rt_pg *pg, const char *repository, const char *workflow,
                            const char *run_id, const char *created)
{
    const char *params[] = {repository, workflow, run_id, created};
    return rt_pg_exec(pg, SQL_STATE_RUN, 4, params, NULL);
}

char *rt_gh_store_etag(rt_pg *pg, const char *url)
{
    const char *params[] = {url};
    PGresult *res = NULL;
    char *etag = NULL;
    if (rt_pg_exec(pg, SQL_ETAG_GET, 1, params, &res) == RT_OK && PQntuples(res) == 1)
        etag = strdup(PQgetvalue(res, 0, 0));
    PQclear(res);
    return etag;
}

int rt_gh_store_etag_put(rt_pg *pg, const char *url, const char *etag)
{
    const char *params[] = {url, etag};
    return rt_pg_exec(pg, SQL_ETAG_PUT, 2, params, NULL);
}
