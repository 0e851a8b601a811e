/* SPDX-License-Identifier: MPL-2.0 */
/* history_store.c - writes test history runs and rows (INSERT and COPY) and looks lines up. */
#include "common/io/history_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io/log.h"

#define STORE_CHUNK 1000 /* rows per INSERT statement */

/* ---- the writer ---- */

static const char SQL_INSERT_RUN[] =
    "INSERT INTO history_runs (source, run_key, repository, project, branch, branch_class,"
    " branch_key, pr, push, revision, platform, label, run_at, complete_results, build_type)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8::integer, $9, $10, $11, $12, $13::timestamptz,"
    " $14::boolean, $15)"
    " ON CONFLICT ON CONSTRAINT history_runs_source_project_run_key_key DO NOTHING RETURNING id";
/* A run stored before, whatever its run_at (migrations/0019: the unique key includes run_at). */
static const char SQL_FIND_RUN[] =
    "SELECT id, run_at FROM history_runs WHERE source = $1 AND project = $2 AND run_key = $3"
    " ORDER BY id LIMIT 1";
enum { FR_ID, FR_RUN_AT, FR_N };
static const char *const FIND_RUN_COLS[FR_N] = {"id", "run_at"};
/* A stored run merged again: migrations/0020's rollup recounts its day. */
static const char SQL_ROLLUP_REDO[] =
    "INSERT INTO history_rollup_queue (run_id, run_at, redo) VALUES ($1::bigint, $2::timestamptz,"
    " true) ON CONFLICT (run_id) DO UPDATE SET redo = true";
static const char SQL_GROUPS_HEAD[] =
    "INSERT INTO history_groups (run_id, run_at, group_name, status, duration_ms, failed) VALUES ";
static const char SQL_GROUPS_MERGE[] =
    " ON CONFLICT (run_id, group_name, run_at) DO UPDATE SET failed = true,"
    " status = EXCLUDED.status WHERE EXCLUDED.failed AND NOT history_groups.failed";
static const char SQL_TESTS_HEAD[] =
    "INSERT INTO history_tests (run_id, run_at, test, group_name, status, expected, failed,"
    " message, signature, signature_hash) VALUES ";
static const char SQL_TESTS_MERGE[] =
    " ON CONFLICT (run_id, test, run_at) DO UPDATE SET (status, expected, failed, message, "
    "signature,"
    " signature_hash) = (EXCLUDED.status, EXCLUDED.expected, true, EXCLUDED.message,"
    " EXCLUDED.signature, EXCLUDED.signature_hash)"
    " WHERE EXCLUDED.failed AND NOT history_tests.failed";
static const char SQL_NO_MERGE[] = " ON CONFLICT DO NOTHING";

/* One multi-row INSERT of rows [first, first + n): $1 is the run id, $2 its run_at, then
 * `columns` parameters a row, taken from fill(). */
static int insert_rows(rt_pg *pg, const char *head, const char *tail, const char *run_id,
                       const char *run_at, size_t columns, const char *const *casts, size_t n,
                       void (*fill)(const rt_history_rows *, size_t, const char **, char *),
                       const rt_history_rows *rows, size_t first)
{
    size_t nparams = 2 + n * columns;
    const char **params = calloc(nparams, sizeof *params);
    char *scratch = calloc(n, 32); /* per row: a number in text */
    size_t size = strlen(head) + strlen(tail) + n * columns * 32 + 16;
    char *sql = malloc(size);
    int rc = RT_ENOMEM;
    if (!params || !scratch || !sql) goto out;
    params[0] = run_id;
    params[1] = run_at;
    size_t len = (size_t)snprintf(sql, size, "%s", head);
    for (size_t r = 0; r < n; r++) {
        fill(rows, first + r, &params[2 + r * columns], scratch + r * 32);
        len += (size_t)snprintf(sql + len, size - len, "%s($1::bigint, $2::timestamptz",
                                r ? ", " : "");
        for (size_t c = 0; c < columns; c++)
            len +=
                (size_t)snprintf(sql + len, size - len, ", $%zu%s", 3 + r * columns + c, casts[c]);
        len += (size_t)snprintf(sql + len, size - len, ")");
    }
    snprintf(sql + len, size - len, "%s", tail);
    rc = rt_pg_exec(pg, sql, (int)nparams, params, NULL);
out:
    free(params);
    free(scratch);
    free(sql);
    return rc;
}

/* The id and run_at of a run stored before, if any (run_id stays as it is when there is none). */
static int find_run(rt_pg *pg, const rt_history_run *run, char run_id[32], char run_at[64])
{
    const char *find[] = {run->source, run->project, run->run_key};
    PGresult *res = NULL;
    int c[FR_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_pg_exec(pg, SQL_FIND_RUN, 3, find, &res);
    if (rc != RT_OK) return rc;
    if (rt_pg_columns(res, FIND_RUN_COLS, FR_N, c, errstr) != RT_OK) {
        rt_log_error("cannot read the stored run", "error", errstr);
        rc = RT_EINVAL;
    } else if (PQntuples(res) == 1) {
        snprintf(run_id, 32, "%s", PQgetvalue(res, 0, c[FR_ID]));
        snprintf(run_at, 64, "%s", PQgetvalue(res, 0, c[FR_RUN_AT]));
    }
    PQclear(res);
    return rc;
}

static void fill_group(const rt_history_rows *rows, size_t i, const char **p, char *scratch)
{
    const rt_history_group *g = &rows->groups[i];
    p[0] = g->name;
    p[1] = g->status;
    p[2] = NULL;
    if (g->duration_ms >= 0) {
        snprintf(scratch, 32, "%ld", g->duration_ms);
        p[2] = scratch;
    }
    p[3] = g->failed ? "t" : "f";
}

static void fill_test(const rt_history_rows *rows, size_t i, const char **p, char *scratch)
{
    const rt_history_test *t = &rows->tests[i];
    p[0] = t->test;
    p[1] = t->group;
    p[2] = t->status ? t->status : (t->failed ? "FAIL" : "PASS");
    p[3] = t->expected;
    p[4] = t->failed ? "t" : "f";
    p[5] = t->message;
    p[6] = t->signature;
    p[7] = t->signature_hash[0] ? t->signature_hash : NULL;
}

int rt_history_store(rt_pg *pg, const rt_history_run *run, const rt_history_rows *rows, bool merge,
                     bool *inserted)
{
    *inserted = false;
    char pr[16], run_id[32] = "", run_at[64] = "";
    PGresult *res = NULL;
    int rc = RT_OK;
    snprintf(run_at, sizeof run_at, "%s", run->run_at);
    /* a run stored before takes the rows whatever the run_at it was stored with */
    if (merge && (rc = find_run(pg, run, run_id, run_at)) != RT_OK) return rc;
    if (!run_id[0]) {
        snprintf(pr, sizeof pr, "%d", run->pr);
        const char *params[] = {run->source,     run->run_key,
                                run->repository, run->project,
                                run->branch,     run->main ? "main" : "other",
                                run->branch_key, run->pr > 0 ? pr : NULL,
                                run->push,       run->revision,
                                run->platform,   run->label,
                                run->run_at,     run->complete_results ? "t" : "f",
                                run->build_type};
        if ((rc = rt_pg_exec(pg, SQL_INSERT_RUN, 15, params, &res)) != RT_OK) return rc;
        if (PQntuples(res) == 1) {
            snprintf(run_id, sizeof run_id, "%s", PQgetvalue(res, 0, 0));
            *inserted = true;
        }
        PQclear(res);
        res = NULL;
        if (!*inserted) {
            if (!merge) return RT_OK; /* stored before, with its rows */
            /* stored meanwhile by another session with the same run_at */
            if ((rc = find_run(pg, run, run_id, run_at)) != RT_OK) return rc;
            if (!run_id[0]) return RT_ENOTFOUND;
        }
    }
    static const char *const group_casts[] = {"", "", "::bigint", "::boolean"};
    static const char *const test_casts[] = {"", "", "", "", "::boolean", "", "", ""};
    for (size_t first = 0; rc == RT_OK && first < rows->ngroups; first += STORE_CHUNK) {
        size_t n = rows->ngroups - first < STORE_CHUNK ? rows->ngroups - first : STORE_CHUNK;
        rc = insert_rows(pg, SQL_GROUPS_HEAD, merge ? SQL_GROUPS_MERGE : SQL_NO_MERGE, run_id,
                         run_at, 4, group_casts, n, fill_group, rows, first);
    }
    for (size_t first = 0; rc == RT_OK && first < rows->ntests; first += STORE_CHUNK) {
        size_t n = rows->ntests - first < STORE_CHUNK ? rows->ntests - first : STORE_CHUNK;
        rc = insert_rows(pg, SQL_TESTS_HEAD, merge ? SQL_TESTS_MERGE : SQL_NO_MERGE, run_id, run_at,
                         8, test_casts, n, fill_test, rows, first);
    }
    if (rc == RT_OK && !*inserted) { /* merged into a stored run: its day is counted again */
        const char *redo[] = {run_id, run_at};
        rc = rt_pg_exec(pg, SQL_ROLLUP_REDO, 2, redo, NULL);
    }
    return rc;
}

/* ---- the batch writer ---- */

#define BATCH_RUN_COLUMNS 15

typedef struct buffer {
    char *data;
    size_t len, cap;
    bool failed;
} buffer;

static void buf_add(buffer *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (b->len + n + 1 > cap) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void buf_str(buffer *b, const char *s) { buf_add(b, s, strlen(s)); }

/* One field of COPY's text format, then the separator sep ('\t' or '\n'). */
static void copy_field(buffer *b, const char *value, char sep)
{
    if (!value) {
        buf_add(b, "\\N", 2);
    } else {
        const char *p = value, *run = value;
        for (; *p; p++) {
            const char *esc = *p == '\\'   ? "\\\\"
                              : *p == '\t' ? "\\t"
                              : *p == '\n' ? "\\n"
                              : *p == '\r' ? "\\r"
                                           : NULL;
            if (!esc) continue;
            buf_add(b, run, (size_t)(p - run));
            buf_add(b, esc, 2);
            run = p + 1;
        }
        buf_add(b, run, (size_t)(p - run));
    }
    buf_add(b, &sep, 1);
}

/* COPY table (columns) FROM STDIN with the text of b. */
static int copy_in(rt_pg *pg, const char *sql, const buffer *b, char *errstr)
{
    PGconn *conn = rt_pg_conn(pg);
    PGresult *res = PQexec(conn, sql);
    bool ready = PQresultStatus(res) == PGRES_COPY_IN;
    PQclear(res);
    int rc = RT_OK;
    if (!ready || PQputCopyData(conn, b->data, (int)b->len) != 1 || PQputCopyEnd(conn, NULL) != 1)
        rc = RT_EDB;
    while ((res = PQgetResult(conn))) {
        if (PQresultStatus(res) != PGRES_COMMAND_OK) rc = RT_EDB;
        PQclear(res);
    }
    if (rc != RT_OK) rt_set_errstr(errstr, "%s: %s", sql, PQerrorMessage(conn));
    return rc;
}

static const char SQL_BATCH_RUNS_HEAD[] =
    "INSERT INTO history_runs (source, run_key, repository, project, branch, branch_class,"
    " branch_key, pr, push, revision, platform, label, run_at, complete_results, build_type)"
    " VALUES ";
static const char SQL_BATCH_RUNS_TAIL[] =
    " ON CONFLICT ON CONSTRAINT history_runs_source_project_run_key_key DO NOTHING"
    " RETURNING id, source, project, run_key";
enum { BR_ID, BR_SOURCE, BR_PROJECT, BR_RUN_KEY, BR_N };
static const char *const BATCH_RUNS_COLS[BR_N] = {"id", "source", "project", "run_key"};
static const char SQL_COPY_GROUPS[] =
    "COPY history_groups (run_id, run_at, group_name, status, duration_ms, failed) FROM STDIN";
static const char SQL_COPY_TESTS[] =
    "COPY history_tests (run_id, run_at, test, group_name, status, expected, failed, message,"
    " signature, signature_hash) FROM STDIN";

/* Long because it is one transaction: the runs in one statement, which of them were new, then
 * their groups and tests by COPY, with one way out that rolls back all of it. */
int rt_history_store_batch(rt_pg *pg, const rt_history_run *runs,
                           const rt_history_rows *const *rows, size_t n, bool *inserted,
                           char *errstr)
{
    static const char *const casts[BATCH_RUN_COLUMNS] = {
        "", "", "", "", "", "", "", "::integer", "", "", "", "", "::timestamptz", "::boolean", ""};
    const char **params = calloc(n * BATCH_RUN_COLUMNS + 1, sizeof *params);
    char(*prs)[16] = calloc(n + 1, sizeof *prs);
    char(*ids)[24] = calloc(n + 1, sizeof *ids);
    buffer sql = {0}, groups = {0}, tests = {0};
    PGresult *res = NULL;
    int rc = RT_ENOMEM;
    for (size_t i = 0; i < n; i++) inserted[i] = false;
    if (n == 0) {
        rc = RT_OK;
        goto out;
    }
    if (!params || !prs || !ids) goto out;

    /* The runs, one statement. */
    buf_str(&sql, SQL_BATCH_RUNS_HEAD);
    for (size_t i = 0; i < n; i++) {
        const rt_history_run *r = &runs[i];
        snprintf(prs[i], sizeof prs[i], "%d", r->pr);
        const char *values[BATCH_RUN_COLUMNS] = {r->source,     r->run_key,
                                                 r->repository, r->project,
                                                 r->branch,     r->main ? "main" : "other",
                                                 r->branch_key, r->pr > 0 ? prs[i] : NULL,
                                                 r->push,       r->revision,
                                                 r->platform,   r->label,
                                                 r->run_at,     r->complete_results ? "t" : "f",
                                                 r->build_type};
        memcpy(&params[i * BATCH_RUN_COLUMNS], values, sizeof values);
        buf_str(&sql, i ? ", (" : "(");
        for (size_t c = 0; c < BATCH_RUN_COLUMNS; c++) {
            char p[32];
            snprintf(p, sizeof p, "%s$%zu%s", c ? ", " : "", i * BATCH_RUN_COLUMNS + c + 1,
                     casts[c]);
            buf_str(&sql, p);
        }
        buf_str(&sql, ")");
    }
    buf_str(&sql, SQL_BATCH_RUNS_TAIL);
    if (sql.failed) goto out;
    rc = rt_pg_exec(pg, sql.data, (int)(n * BATCH_RUN_COLUMNS), params, &res);
    if (rc != RT_OK) {
        rt_set_errstr(errstr, "%s", rt_pg_errstr(pg));
        goto out;
    }
    int c[BR_N];
    if ((rc = rt_pg_columns(res, BATCH_RUNS_COLS, BR_N, c, errstr)) != RT_OK) goto out;
    /* Which runs were new: each returned key goes to the first run of that key. */
    for (int k = 0; k < PQntuples(res); k++) {
        const char *source = PQgetvalue(res, k, c[BR_SOURCE]),
                   *project = PQgetvalue(res, k, c[BR_PROJECT]),
                   *run_key = PQgetvalue(res, k, c[BR_RUN_KEY]);
        for (size_t i = 0; i < n; i++) {
            if (inserted[i] || strcmp(runs[i].run_key, run_key) ||
                strcmp(runs[i].project, project) || strcmp(runs[i].source, source))
                continue;
            inserted[i] = true;
            snprintf(ids[i], sizeof ids[i], "%s", PQgetvalue(res, k, c[BR_ID]));
            break;
        }
    }

    /* Their groups and tests: new runs, unique names within each, so COPY cannot conflict. */
    for (size_t i = 0; i < n; i++) {
        if (!inserted[i]) continue;
        const rt_history_rows *rw = rows[i];
        for (size_t g = 0; g < rw->ngroups; g++) {
            const rt_history_group *gr = &rw->groups[g];
            char duration[32];
            snprintf(duration, sizeof duration, "%ld", gr->duration_ms);
            copy_field(&groups, ids[i], '\t');
            copy_field(&groups, runs[i].run_at, '\t');
            copy_field(&groups, gr->name, '\t');
            copy_field(&groups, gr->status, '\t');
            copy_field(&groups, gr->duration_ms >= 0 ? duration : NULL, '\t');
            copy_field(&groups, gr->failed ? "t" : "f", '\n');
        }
        for (size_t t = 0; t < rw->ntests; t++) {
            const rt_history_test *te = &rw->tests[t];
            copy_field(&tests, ids[i], '\t');
            copy_field(&tests, runs[i].run_at, '\t');
            copy_field(&tests, te->test, '\t');
            copy_field(&tests, te->group, '\t');
            copy_field(&tests, te->status ? te->status : (te->failed ? "FAIL" : "PASS"), '\t');
            copy_field(&tests, te->expected, '\t');
            copy_field(&tests, te->failed ? "t" : "f", '\t');
            copy_field(&tests, te->message, '\t');
            copy_field(&tests, te->signature, '\t');
            copy_field(&tests, te->signature_hash[0] ? te->signature_hash : NULL, '\n');
        }
    }
    if (groups.failed || tests.failed) goto out;
    rc = RT_OK;
    if (groups.len) rc = copy_in(pg, SQL_COPY_GROUPS, &groups, errstr);
    if (rc == RT_OK && tests.len) rc = copy_in(pg, SQL_COPY_TESTS, &tests, errstr);
out:
    if (rc != RT_OK)
        for (size_t i = 0; i < n; i++) inserted[i] = false;
    PQclear(res);
    free(params);
    free(prs);
    free(ids);
    free(sql.data);
    free(groups.data);
    free(tests.data);
    return rc;
}

/* ---- the rollup and retention ---- */

static const char SQL_ROLLUP_APPLY[] = "SELECT history_rollup_apply($1::integer)";
static const char SQL_MAINTAIN[] = "SELECT history_maintain($1::integer)";
static const char SQL_PRUNE[] = "SELECT history_rollup_prune($1::integer)";

/* Runs sql with one integer parameter as a transaction of its own (no transaction may be
 * open); *value is its result. */
static int exec_alone(rt_pg *pg, const char *sql, int argument, long *value)
{
    char text[16];
    snprintf(text, sizeof text, "%d", argument);
    const char *params[] = {text};
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, sql, 1, params, &res);
    if (rc == RT_OK) *value = atol(PQgetvalue(res, 0, 0));
    PQclear(res);
    return rc;
}

int rt_history_rollup(rt_pg *pg, int chunk, long *added)
{
    long total = 0, n = 0;
    int rc = RT_OK;
    do {
        rc = exec_alone(pg, SQL_ROLLUP_APPLY, chunk, &n);
        if (rc == RT_OK && n > 0) total += n;
    } while (rc == RT_OK && n >= chunk);
    if (added) *added = total;
    return rc;
}

int rt_history_maintain(rt_pg *pg, int retention_days, long *partitions)
{
    long n = 0;
    int rc = exec_alone(pg, SQL_MAINTAIN, retention_days, &n);
    if (partitions) *partitions = n;
    return rc;
}

int rt_history_rollup_prune(rt_pg *pg, long *removed)
{
    long total = 0, n = 0;
    int rc;
    do {
        rc = exec_alone(pg, SQL_PRUNE, 10000, &n);
        if (rc == RT_OK) total += n;
    } while (rc == RT_OK && n > 0);
    if (removed) *removed = total;
    return rc;
}

/* ---- what retrig-decide asks ---- */

/* $1 the lines as [{"n", "test", "hash", "signature"}], $2 repository, $3 window days,
 * $4 and $5 the project and revision decided about, $6 min_branches. */
static const char SQL_LINES_LOOKUP[] =
    "WITH l AS (SELECT x.n, x.test, x.hash, x.signature"
    "             FROM jsonb_to_recordset($1::jsonb) AS x(n integer, test text, hash text,"
    "                                                      signature text)),"
    " w AS (SELECT now() - make_interval(days => $3::integer) AS since)"
    " SELECT l.n, coalesce(rn.runs, 0) AS runs, f.failures, f.pushes, f.branches, f.prs,"
    "        f.main_pushes, f.signature_pushes, f.branches_all > $6::integer AS flaky,"
    "        to_char(ff.run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS same_at,"
    "        ff.project AS same_project, ff.branch AS same_branch, ff.push AS same_push,"
    "        ff.revision AS same_revision,"
    "        to_char(fa.run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS first_at,"
    "        fa.project AS first_project, fa.branch AS first_branch, fa.push AS first_push,"
    "        fa.revision AS first_revision, fa.signature AS first_signature"
    "   FROM l CROSS JOIN w"
    "   LEFT JOIN LATERAL ("
    "        SELECT count(*) FILTER (WHERE o.other) AS failures,"
    "               count(DISTINCT r.project || '/' || r.push) FILTER (WHERE o.other) AS pushes,"
    "               count(DISTINCT r.branch_key)"
    "                     FILTER (WHERE o.other AND r.branch_class <> 'main') AS branches,"
    "               count(DISTINCT r.pr) FILTER (WHERE o.other) AS prs,"
    "               count(DISTINCT r.project || '/' || r.push)"
    "                     FILTER (WHERE o.other AND r.branch_class = 'main') AS main_pushes,"
    "               count(DISTINCT r.project || '/' || r.push)"
    "                     FILTER (WHERE o.other AND t.signature = l.signature) AS signature_pushes,"
    "               count(DISTINCT r.branch_key) FILTER (WHERE r.branch_class <> 'main')"
    "                     AS branches_all"
    "          FROM history_tests t"
    "          JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at"
    "          CROSS JOIN LATERAL (SELECT NOT (r.project = $4"
    "                                          AND r.revision IS NOT DISTINCT FROM $5)) o(other)"
    "         WHERE t.test = l.test AND t.failed AND r.repository = $2 AND r.run_at >= w.since"
    "           AND t.run_at >= w.since"
    "        ) f ON true"
    "   LEFT JOIN LATERAL ("
    "        SELECT count(*) AS runs FROM history_test_runs v"
    "         WHERE v.test = l.test AND v.repository = $2 AND v.run_at >= w.since) rn ON true"
    "   LEFT JOIN LATERAL ("
    "        SELECT r.run_at, r.project, r.branch, r.push, r.revision"
    "          FROM history_tests t"
    "          JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at"
    "         WHERE t.failed AND t.signature_hash = l.hash AND t.signature = l.signature"
    "           AND r.repository = $2"
    "         ORDER BY r.run_at, r.id LIMIT 1) ff ON true"
    "   LEFT JOIN LATERAL ("
    "        SELECT r.run_at, r.project, r.branch, r.push, r.revision, t.signature"
    "          FROM history_tests t"
    "          JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at"
    "         WHERE t.failed AND t.test = l.test AND r.repository = $2"
    "         ORDER BY r.run_at, r.id LIMIT 1) fa ON true"
    "  ORDER BY l.n";
enum {
    LL_RUNS,
    LL_FAILURES,
    LL_PUSHES,
    LL_BRANCHES,
    LL_PRS,
    LL_MAIN_PUSHES,
    LL_SIGNATURE_PUSHES,
    LL_FLAKY,
    LL_SAME_AT,
    LL_SAME_PROJECT,
    LL_SAME_BRANCH,
    LL_SAME_PUSH,
    LL_SAME_REVISION,
    LL_FIRST_AT,
    LL_FIRST_PROJECT,
    LL_FIRST_BRANCH,
    LL_FIRST_PUSH,
    LL_FIRST_REVISION,
    LL_FIRST_SIGNATURE,
    LL_N
};
static const char *const LINES_LOOKUP_COLS[LL_N] = {
    "runs",         "failures",         "pushes",         "branches",       "prs",
    "main_pushes",  "signature_pushes", "flaky",          "same_at",        "same_project",
    "same_branch",  "same_push",        "same_revision",  "first_at",       "first_project",
    "first_branch", "first_push",       "first_revision", "first_signature"};

static json_t *int_at(PGresult *res, int row, int col)
{
    return json_integer((json_int_t)atoll(PQgetvalue(res, row, col)));
}

static json_t *text_at(PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* The lines as the look-ups' $1: [{"n", "test", "hash", "signature"}], malloc'd text; NULL
 * when out of memory. */
static char *lines_json(const rt_failure_line *lines, size_t nlines)
{
    json_t *input = json_array();
    for (size_t i = 0; input && i < nlines; i++) {
        const rt_failure_line *l = &lines[i];
        if (json_array_append_new(input,
                                  json_pack("{s:i, s:s, s:s, s:s}", "n", (int)i, "test",
                                            l->test ? l->test : "", "hash", l->hash_hex,
                                            "signature", l->signature ? l->signature : "")) != 0) {
            json_decref(input);
            return NULL;
        }
    }
    char *text = input ? json_dumps(input, JSON_COMPACT) : NULL;
    json_decref(input);
    return text;
}

int rt_history_lines_lookup(rt_pg *pg, const rt_history_lookup *q, const rt_failure_line *lines,
                            size_t nlines, json_t **out)
{
    *out = NULL;
    json_t *result = json_array();
    char *input_text = NULL;
    PGresult *res = NULL;
    int rc = RT_ENOMEM;
    if (!result || !(input_text = lines_json(lines, nlines))) goto out;
    char days[16], min_branches[16];
    snprintf(days, sizeof days, "%d", q->window_days);
    snprintf(min_branches, sizeof min_branches, "%d", q->min_branches);
    const char *params[] = {input_text, q->repository, days, q->project, q->revision, min_branches};
    if ((rc = rt_pg_exec(pg, SQL_LINES_LOOKUP, 6, params, &res)) != RT_OK) goto out;
    int c[LL_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    if ((rc = rt_pg_columns(res, LINES_LOOKUP_COLS, LL_N, c, errstr)) != RT_OK) {
        rt_log_error("cannot read the history of the lines", "error", errstr);
        goto out;
    }
    rc = RT_ENOMEM;
    if ((size_t)PQntuples(res) != nlines) {
        rc = RT_EDB;
        goto out;
    }
    for (int r = 0; r < PQntuples(res); r++) {
        json_t *same = json_null(), *first = json_null();
        if (!PQgetisnull(res, r, c[LL_SAME_AT]))
            same = json_pack("{s:o, s:o, s:o, s:o, s:o}", "at", text_at(res, r, c[LL_SAME_AT]),
                             "project", text_at(res, r, c[LL_SAME_PROJECT]), "branch",
                             text_at(res, r, c[LL_SAME_BRANCH]), "push",
                             text_at(res, r, c[LL_SAME_PUSH]), "revision",
                             text_at(res, r, c[LL_SAME_REVISION]));
        if (!PQgetisnull(res, r, c[LL_FIRST_AT]))
            first = json_pack(
                "{s:o, s:o, s:o, s:o, s:o, s:o}", "at", text_at(res, r, c[LL_FIRST_AT]), "project",
                text_at(res, r, c[LL_FIRST_PROJECT]), "branch", text_at(res, r, c[LL_FIRST_BRANCH]),
                "push", text_at(res, r, c[LL_FIRST_PUSH]), "revision",
                text_at(res, r, c[LL_FIRST_REVISION]), "signature",
                text_at(res, r, c[LL_FIRST_SIGNATURE]));
        json_t *o =
            json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o}", "window_days",
                      q->window_days, "runs", int_at(res, r, c[LL_RUNS]), "failures",
                      int_at(res, r, c[LL_FAILURES]), "pushes", int_at(res, r, c[LL_PUSHES]),
                      "branches", int_at(res, r, c[LL_BRANCHES]), "prs", int_at(res, r, c[LL_PRS]),
                      "main_pushes", int_at(res, r, c[LL_MAIN_PUSHES]), "same_signature_pushes",
                      int_at(res, r, c[LL_SIGNATURE_PUSHES]), "flaky",
                      PQgetvalue(res, r, c[LL_FLAKY])[0] == 't', "first_failure", first,
                      "first_failure_same_signature", same);
        if (!o || json_array_append_new(result, o) != 0) goto out;
    }
    *out = result;
    result = NULL;
    rc = RT_OK;
out:
    PQclear(res);
    free(input_text);
    json_decref(result);
    return rc;
}

static const char SQL_MODEL_COUNTS[] =
    "WITH l AS (SELECT x.n, x.test, x.hash, x.signature"
    "             FROM jsonb_to_recordset($1::jsonb) AS x(n integer, test text, hash text,"
    "                                                      signature text)),"
    " w AS (SELECT coalesce(nullif($6::text, '')::timestamptz, now()) AS until)"
    " SELECT l.n, coalesce(rn.runs, 0) AS runs, coalesce(f.failures, 0) AS failures,"
    "        coalesce(f.signature, 0) AS signature_failures"
    "   FROM l CROSS JOIN w"
    "   LEFT JOIN LATERAL ("
    "        SELECT count(*) AS runs FROM history_test_runs v"
    "         WHERE v.test = l.test AND v.repository = $2"
    "           AND v.run_at >= w.until - make_interval(days => $3::integer)"
    "           AND v.run_at < w.until"
    "           AND NOT (v.project = $4 AND v.revision IS NOT DISTINCT FROM $5)) rn ON true"
    "   LEFT JOIN LATERAL ("
    "        SELECT count(*) AS failures,"
    "               count(*) FILTER (WHERE t.signature_hash = l.hash"
    "                                  AND t.signature = l.signature) AS signature"
    "          FROM history_tests t JOIN history_runs r ON r.id = t.run_id AND r.run_at = t.run_at"
    "         WHERE t.test = l.test AND t.failed AND r.repository = $2"
    "           AND t.run_at >= w.until - make_interval(days => $3::integer)"
    "           AND t.run_at < w.until"
    "           AND NOT (r.project = $4 AND r.revision IS NOT DISTINCT FROM $5)) f ON true"
    "  ORDER BY l.n";
enum { MC_RUNS, MC_FAILURES, MC_SIGNATURE, MC_N };
static const char *const MODEL_COUNTS_COLS[MC_N] = {"runs", "failures", "signature_failures"};

int rt_history_model_counts(rt_pg *pg, const rt_history_lookup *q, const char *before,
                            const rt_failure_line *lines, size_t nlines, rt_decide_history *out)
{
    for (size_t i = 0; i < nlines; i++) out[i] = (rt_decide_history){0, 0, -1};
    if (nlines == 0) return RT_OK;
    char *input_text = NULL;
    PGresult *res = NULL;
    int rc = RT_ENOMEM;
    if (!(input_text = lines_json(lines, nlines))) goto out;
    char days[16];
    snprintf(days, sizeof days, "%d", q->window_days);
    const char *params[] = {input_text, q->repository, days,
                            q->project, q->revision,   before ? before : ""};
    if ((rc = rt_pg_exec(pg, SQL_MODEL_COUNTS, 6, params, &res)) != RT_OK) goto out;
    int c[MC_N];
    char errstr[RT_ERRSTR_SIZE] = "";
    if ((rc = rt_pg_columns(res, MODEL_COUNTS_COLS, MC_N, c, errstr)) != RT_OK) {
        rt_log_error("cannot read the history counts of the lines", "error", errstr);
        goto out;
    }
    if ((size_t)PQntuples(res) != nlines) {
        rc = RT_EDB;
        goto out;
    }
    for (int r = 0; r < PQntuples(res); r++) {
        const rt_failure_line *l = &lines[r];
        if (!l->test || !l->test[0]) continue; /* no test: no history */
        long runs = atol(PQgetvalue(res, r, c[MC_RUNS])),
             failures = atol(PQgetvalue(res, r, c[MC_FAILURES]));
        /* A failure recorded for a run the view does not list still ran. */
        out[r].runs = runs > failures ? runs : failures;
        out[r].failures = failures;
        out[r].signature_failures =
            l->signature && l->signature[0] ? atol(PQgetvalue(res, r, c[MC_SIGNATURE])) : -1;
    }
    rc = RT_OK;
out:
    PQclear(res);
    free(input_text);
    return rc;
}
