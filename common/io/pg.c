/* SPDX-License-Identifier: MPL-2.0 */
/* pg.c - libpq connection with parameterised statements, transactions and safe resets.
 * See pg.h for the contract. One handle per thread. */
#include "common/io/pg.h"

#include <poll.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/io/log.h"

struct rt_pg {
    PGconn *conn;
    bool in_transaction;
    char *password; /* from database_url, only to scrub it out of messages; NULL: none */
    char errstr[RT_ERRSTR_SIZE];
    char sqlstate[6];
    struct statement *stmts; /* texts run through rt_pg_exec: see "Prepared statements" */
    size_t nstmts, stmts_cap;
};

/* A statement text this handle has run: prepared (as rt_<index>) from its second use. */
struct statement {
    char *sql;
    size_t len;
    uint64_t hash;
    unsigned uses;
    unsigned version; /* part of its name: a new one each time it must be prepared afresh */
    bool prepared;    /* on the current session */
};
#define PREPARE_AT_USE 2

/* Replaces every occurrence of secret in s (in place) by "***". */
static void scrub(char *s, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0;
    char *p = s;
    if (n < 3) return; /* tiny strings are everywhere; nobody uses such a password */
    while ((p = strstr(p, secret)) != NULL) {
        memcpy(p, "***", 3);
        memmove(p + 3, p + n, strlen(p + n) + 1);
        p += 3;
    }
}

/* Copies a libpq message into errstr after prefix: one line, no trailing newline, URL
 * passwords replaced by "***". Messages from connecting (which may quote parts of
 * database_url) also have the connection's password scrubbed; server errors about
 * statements cannot contain it, and scrubbing them would mangle words that happen to
 * equal a short password. */
static void set_message(rt_pg *h, bool connecting, const char *prefix, const char *message)
{
    char clean[RT_ERRSTR_SIZE];
    rt_redact(message ? message : "", clean, sizeof clean);
    if (connecting) scrub(clean, h->password);
    for (char *c = clean; *c; c++) {
        if (*c == '\n' || *c == '\t') *c = ' ';
    }
    size_t len = strlen(clean);
    while (len > 0 && clean[len - 1] == ' ') clean[--len] = '\0';
    rt_set_errstr(h->errstr, "%s%s", prefix, clean);
}

/* Remembers the password from database_url so that it can be scrubbed out of messages.
 * RT_EINVAL when libpq cannot parse the URL. */
static int remember_password(rt_pg *h, const char *database_url, char *errstr)
{
    char *parse_error = NULL;
    PQconninfoOption *options = PQconninfoParse(database_url, &parse_error);
    int rc = RT_OK;

    if (!options) {
        char clean[RT_ERRSTR_SIZE];
        rt_redact(parse_error ? parse_error : "out of memory", clean, sizeof clean);
        clean[strcspn(clean, "\n")] = '\0';
        rt_set_errstr(errstr, "database_url is not a libpq conninfo string or URI: %s", clean);
        rc = parse_error ? RT_EINVAL : RT_ENOMEM;
        goto out;
    }
    for (PQconninfoOption *o = options; o->keyword; o++) {
        if (!strcmp(o->keyword, "password") && o->val && o->val[0]) {
            h->password = strdup(o->val);
            if (!h->password) {
                rt_set_errstr(errstr, "out of memory");
                rc = RT_ENOMEM;
            }
        }
    }
out:
    if (options) PQconninfoFree(options);
    if (parse_error) PQfreemem(parse_error);
    return rc;
}

/* Server notices (and the goodbye of a terminated session) go to the log, not to stderr. */
static void log_notice(void *arg, const char *message)
{
    char line[RT_ERRSTR_SIZE];
    (void)arg;
    snprintf(line, sizeof line, "%s", message);
    line[strcspn(line, "\n")] = '\0';
    rt_log_info("postgres notice", "message", line);
}

int rt_pg_connect_dbname(rt_pg **out, const char *database_url, const char *dbname,
                         const char *program, char *errstr)
{
    char application_name[64];
    rt_pg *h = calloc(1, sizeof *h);
    int rc;

    *out = NULL;
    if (!h) {
        rt_set_errstr(errstr, "out of memory");
        return RT_ENOMEM;
    }
    rc = remember_password(h, database_url ? database_url : "", errstr);
    if (rc != RT_OK) goto out;

    snprintf(application_name, sizeof application_name, "retrig-%s", program ? program : "retrig");
    /* Later keywords override what the expanded URL sets: connect_timeout is a default the
     * URL may change; the database override and application_name are ours. */
    const char *keywords[] = {"connect_timeout", "dbname", "application_name",
                              dbname ? "dbname" : NULL, NULL};
    const char *values[] = {"10", database_url, application_name, dbname, NULL};
    h->conn = PQconnectdbParams(keywords, values, 1);
    if (!h->conn) {
        rt_set_errstr(errstr, "out of memory");
        rc = RT_ENOMEM;
        goto out;
    }
    if (PQstatus(h->conn) != CONNECTION_OK) {
        char prefix[160];
        snprintf(prefix, sizeof prefix, "cannot connect to Postgres at %s:%s/%s: ",
                 PQhost(h->conn) ? PQhost(h->conn) : "?", PQport(h->conn) ? PQport(h->conn) : "?",
                 PQdb(h->conn) ? PQdb(h->conn) : "?");
        set_message(h, true, prefix, PQerrorMessage(h->conn));
        rt_set_errstr(errstr, "%s", h->errstr);
        rc = RT_ECONN;
        goto out;
    }
    PQsetNoticeProcessor(h->conn, log_notice, NULL);
    /* Our statements are look-ups and writes. Over the history's many partitions some cost
     * enough to cross jit_above_cost, and LLVM then spends seconds compiling what runs in
     * milliseconds (a decision's line look-up: 6 s of 6.3 on 13,000 runs): no JIT in our
     * sessions. A server without the setting (before 11) answers an error, ignored. */
    PQclear(PQexec(h->conn, "SET jit = off"));
    *out = h;
    h = NULL;
out:
    rt_pg_free(h);
    return rc;
}

int rt_pg_connect(rt_pg **out, const char *database_url, const char *program, char *errstr)
{
    return rt_pg_connect_dbname(out, database_url, NULL, program, errstr);
}

void rt_pg_free(rt_pg *h)
{
    if (!h) return;
    if (h->conn) PQfinish(h->conn);
    for (size_t i = 0; i < h->nstmts; i++) free(h->stmts[i].sql);
    free(h->stmts);
    if (h->password) {
        explicit_bzero(h->password, strlen(h->password));
        free(h->password);
    }
    free(h);
}

const char *rt_pg_errstr(const rt_pg *h) { return h ? h->errstr : "no handle"; }
const char *rt_pg_sqlstate(const rt_pg *h) { return h ? h->sqlstate : ""; }
PGconn *rt_pg_conn(rt_pg *h) { return h->conn; }
bool rt_pg_in_transaction(const rt_pg *h) { return h->in_transaction; }

int rt_pg_columns(const PGresult *res, const char *const *names, size_t n, int *cols, char *errstr)
{
    for (size_t i = 0; i < n; i++) {
        cols[i] = PQfnumber(res, names[i]);
        if (cols[i] < 0) {
            rt_set_errstr(errstr, "the result has no column %s", names[i]);
            return RT_EINVAL;
        }
    }
    return RT_OK;
}

int rt_pg_result_columns(PGresult **res, const char *const *names, size_t n, int *cols)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_pg_columns(*res, names, n, cols, errstr) == RT_OK) return RT_OK;
    rt_log_error("postgres: unexpected result", "error", errstr);
    PQclear(*res);
    *res = NULL;
    return RT_EDB;
}

const char *rt_pg_text(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

long long rt_pg_int(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? 0 : strtoll(PQgetvalue(res, row, col), NULL, 10);
}

double rt_pg_float(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? 0.0 : strtod(PQgetvalue(res, row, col), NULL);
}

bool rt_pg_bool(const PGresult *res, int row, int col)
{
    return !PQgetisnull(res, row, col) && PQgetvalue(res, row, col)[0] == 't';
}

/* True when the idle connection is unusable: the server closed it (restart, idle timeout,
 * pg_terminate_backend). The server's goodbye (a FATAL message) and the end of the stream
 * may arrive separately, so read while there is something to read (bounded). */
static bool idle_connection_is_dead(rt_pg *h)
{
    for (int i = 0; i < 8; i++) {
        struct pollfd pfd = {.fd = PQsocket(h->conn), .events = POLLIN};
        if (pfd.fd < 0) return true;
        if (poll(&pfd, 1, 0) == 0) return false;
        if (!PQconsumeInput(h->conn) || PQstatus(h->conn) != CONNECTION_OK) return true;
        PGnotify *notify;
        while ((notify = PQnotifies(h->conn)) != NULL) PQfreemem(notify);
    }
    return false;
}

static int reset(rt_pg *h)
{
    rt_log_warn("postgres connection lost; reconnecting", "host", PQhost(h->conn), "port",
                PQport(h->conn));
    PQreset(h->conn);
    /* A new session: the statements prepared on the old one are gone. */
    for (size_t i = 0; i < h->nstmts; i++) h->stmts[i].prepared = false;
    if (PQstatus(h->conn) != CONNECTION_OK) {
        set_message(h, true, "cannot reconnect to Postgres: ", PQerrorMessage(h->conn));
        return RT_ECONN;
    }
    return RT_OK;
}

/* Makes the connection usable before a statement is sent. */
static int prepare(rt_pg *h)
{
    h->errstr[0] = '\0';
    h->sqlstate[0] = '\0';
    if (h->in_transaction) {
        if (PQstatus(h->conn) == CONNECTION_OK) return RT_OK;
        rt_set_errstr(h->errstr, "the Postgres connection was lost inside a transaction; "
                                 "roll back and run the transaction again");
        return RT_ECONN;
    }
    if (PQstatus(h->conn) == CONNECTION_OK && !idle_connection_is_dead(h)) return RT_OK;
    return reset(h);
}

/* Classifies a result; clears it unless it succeeded and out takes it. */
static int finish(rt_pg *h, PGresult *res, PGresult **out)
{
    ExecStatusType status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    int rc;

    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
        if (out)
            *out = res;
        else
            PQclear(res);
        return RT_OK;
    }
    if (PQstatus(h->conn) != CONNECTION_OK) {
        set_message(h, false, "Postgres connection lost: ", PQerrorMessage(h->conn));
        rc = RT_ECONN;
    } else if (!res) {
        set_message(h, false, "Postgres: ", PQerrorMessage(h->conn));
        rc = RT_ENOMEM;
    } else if (status != PGRES_FATAL_ERROR && status != PGRES_NONFATAL_ERROR) {
        rt_set_errstr(h->errstr, "Postgres: unexpected result %s", PQresStatus(status));
        rc = RT_EDB;
    } else {
        const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
        const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
        char message[RT_ERRSTR_SIZE];
        snprintf(h->sqlstate, sizeof h->sqlstate, "%s", state ? state : "");
        snprintf(message, sizeof message, "%s%s%s", primary ? primary : PQresultErrorMessage(res),
                 detail ? ": " : "", detail ? detail : "");
        char prefix[16];
        snprintf(prefix, sizeof prefix, "[%s] ", h->sqlstate);
        set_message(h, false, prefix, message);
        if (!strcmp(h->sqlstate, RT_PG_UNIQUE_VIOLATION))
            rc = RT_ECONFLICT;
        else if (!strcmp(h->sqlstate, RT_PG_SERIALIZATION_FAILURE) ||
                 !strcmp(h->sqlstate, RT_PG_DEADLOCK_DETECTED))
            rc = RT_ERETRY;
        else
            rc = RT_EDB;
    }
    PQclear(res);
    return rc;
}

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t hash = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) hash = (hash ^ (unsigned char)s[i]) * 1099511628211ULL;
    return hash;
}

/* Whether a text is worth preparing: statements that plan (or carry parameters), not
 * transaction control. */
static bool preparable(const char *sql, int nparams)
{
    if (nparams > 0) return true;
    while (*sql == ' ' || *sql == '\n' || *sql == '\t' || *sql == '(') sql++;
    static const char *const verbs[] = {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH"};
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        if (!strncasecmp(sql, verbs[i], strlen(verbs[i]))) return true;
    return false;
}

/* The handle's entry for sql, added if there is room; NULL when it is not kept. */
static struct statement *statement_for(rt_pg *h, const char *sql, int nparams)
{
    size_t len = strlen(sql);
    uint64_t hash = fnv1a(sql, len);
    for (size_t i = 0; i < h->nstmts; i++) {
        struct statement *e = &h->stmts[i];
        if (e->hash == hash && e->len == len && !memcmp(e->sql, sql, len)) return e;
    }
    if (h->nstmts >= RT_PG_PREPARED_MAX || !preparable(sql, nparams)) return NULL;
    if (h->nstmts == h->stmts_cap) {
        size_t cap = h->stmts_cap ? 2 * h->stmts_cap : 16;
        struct statement *stmts = realloc(h->stmts, cap * sizeof *stmts);
        if (!stmts) return NULL; /* run it unprepared */
        h->stmts = stmts;
        h->stmts_cap = cap;
    }
    char *copy = strdup(sql);
    if (!copy) return NULL;
    h->stmts[h->nstmts] = (struct statement){.sql = copy, .len = len, .hash = hash};
    return &h->stmts[h->nstmts++];
}

/* The name the session knows e by: rt_<index>_<version>. */
static void statement_name(const rt_pg *h, const struct statement *e, char name[48])
{
    snprintf(name, 48, "rt_%zu_%u", (size_t)(e - h->stmts), e->version);
}

/* After e failed as a prepared statement: true when the session lost it (26000: DISCARD ALL
 * from a pooler) or a migration changed the columns it returns (0A000); it is then prepared
 * afresh, under a new name, at its next use. */
static bool forget_if_stale(rt_pg *h, struct statement *e)
{
    if (strcmp(h->sqlstate, "26000") != 0 &&
        (strcmp(h->sqlstate, "0A000") != 0 || !strstr(h->errstr, "cached plan")))
        return false;
    e->prepared = false;
    e->uses = PREPARE_AT_USE - 1;
    e->version++;
    return true;
}

int rt_pg_exec(rt_pg *h, const char *sql, int nparams, const char *const *params, PGresult **out)
{
    if (out) *out = NULL;
    int rc = prepare(h);
    if (rc != RT_OK) return rc;
    struct statement *e = statement_for(h, sql, nparams);
    char name[48] = "";
    if (e) statement_name(h, e, name);
    if (e && !e->prepared && ++e->uses >= PREPARE_AT_USE) {
        rc = finish(h, PQprepare(h->conn, name, sql, nparams, NULL), NULL);
        if (rc != RT_OK) return rc;
        e->prepared = true;
    }
    if (!e || !e->prepared)
        return finish(h, PQexecParams(h->conn, sql, nparams, NULL, params, NULL, NULL, 0), out);

    rc = finish(h, PQexecPrepared(h->conn, name, nparams, params, NULL, NULL, 0), out);
    /* A stale statement runs now, unprepared, outside a transaction; inside, the failure has
     * aborted the transaction and the caller runs it again. */
    if (rc == RT_EDB && forget_if_stale(h, e) && !h->in_transaction)
        return finish(h, PQexecParams(h->conn, sql, nparams, NULL, params, NULL, NULL, 0), out);
    return rc;
}

int rt_pg_exec_script(rt_pg *h, const char *sql)
{
    int rc = prepare(h);
    if (rc != RT_OK) return rc;
    PGresult *res = PQexec(h->conn, sql);
    if (res && PQresultStatus(res) == PGRES_EMPTY_QUERY) { /* comments only: nothing to run */
        PQclear(res);
        return RT_OK;
    }
    return finish(h, res, NULL);
}

int rt_pg_begin(rt_pg *h)
{
    if (h->in_transaction) {
        rt_set_errstr(h->errstr, "a transaction is already open");
        return RT_EINVAL;
    }
    int rc = rt_pg_exec(h, "BEGIN", 0, NULL, NULL);
    if (rc == RT_OK) h->in_transaction = true;
    return rc;
}

int rt_pg_commit(rt_pg *h)
{
    PGresult *res = NULL;
    if (!h->in_transaction) {
        rt_set_errstr(h->errstr, "no transaction is open");
        return RT_EINVAL;
    }
    int rc = rt_pg_exec(h, "COMMIT", 0, NULL, &res);
    /* Whatever happened, the transaction is over (committed, rolled back, or lost). */
    h->in_transaction = false;
    if (rc == RT_OK && strcmp(PQcmdStatus(res), "COMMIT") != 0) {
        /* COMMIT of a transaction that an earlier statement aborted answers ROLLBACK. */
        rt_set_errstr(h->errstr, "the transaction was rolled back: an earlier statement in it "
                                 "failed");
        rc = RT_EDB;
    }
    PQclear(res);
    return rc;
}

/* Sends [BEGIN], sql, [COMMIT] and one Sync, then reads the results in order: one round trip.
 * The statement is prepared (or named) as rt_pg_exec would. Returns the first failure; the
 * statement's result goes to *out when everything succeeded. *commit_ok: COMMIT answered
 * COMMIT (not ROLLBACK, as it does for a transaction an earlier statement aborted). */
static int exec_pipelined(rt_pg *h, bool begin, const char *sql, int nparams,
                          const char *const *params, bool commit, PGresult **out, bool *commit_ok)
{
    PGconn *c = h->conn;
    struct statement *e = statement_for(h, sql, nparams);
    char name[48] = "";
    bool do_prepare = false;
    if (e) {
        statement_name(h, e, name);
        do_prepare = !e->prepared && e->uses + 1 >= PREPARE_AT_USE;
        e->uses++;
    }
    bool named = e && (e->prepared || do_prepare);
    if (!PQenterPipelineMode(c)) {
        set_message(h, false, "Postgres: ", PQerrorMessage(c));
        return RT_EDB;
    }
    bool sent = !begin || PQsendQueryParams(c, "BEGIN", 0, NULL, NULL, NULL, NULL, 0);
    if (sent && do_prepare) sent = PQsendPrepare(c, name, sql, nparams, NULL);
    if (sent)
        sent = named ? PQsendQueryPrepared(c, name, nparams, params, NULL, NULL, 0)
                     : PQsendQueryParams(c, sql, nparams, NULL, params, NULL, NULL, 0);
    if (sent && commit) sent = PQsendQueryParams(c, "COMMIT", 0, NULL, NULL, NULL, NULL, 0);
    if (sent) sent = PQpipelineSync(c);

    /* The results in the order sent, each followed by NULL, then the Sync. */
    enum { BEGIN_R, PREPARE_R, STATEMENT_R, COMMIT_R, NRESULTS };
    bool wanted[NRESULTS] = {begin, do_prepare, true, commit};
    PGresult *results[NRESULTS] = {0};
    bool complete = sent;
    for (int i = 0; complete && i < NRESULTS; i++) {
        if (!wanted[i]) continue;
        results[i] = PQgetResult(c);
        if (!results[i]) complete = false;
        PGresult *extra;
        while (complete && (extra = PQgetResult(c)) != NULL) PQclear(extra);
    }
    if (complete) {
        PGresult *sync = PQgetResult(c);
        complete = sync && PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
        PQclear(sync);
    }
    if (!complete || !PQexitPipelineMode(c)) {
        /* A broken connection: PQreset (rt_pg_rollback, or prepare() outside a transaction)
         * leaves pipeline mode. */
        for (int i = 0; i < NRESULTS; i++) PQclear(results[i]);
        if (PQstatus(c) == CONNECTION_OK) {
            set_message(h, false, "Postgres pipeline: ", PQerrorMessage(c));
            return RT_EDB;
        }
        set_message(h, false, "Postgres connection lost: ", PQerrorMessage(c));
        return RT_ECONN;
    }

    int rc = RT_OK;
    if (begin) {
        rc = finish(h, results[BEGIN_R], NULL);
        results[BEGIN_R] = NULL;
        if (rc == RT_OK) h->in_transaction = true;
    }
    if (do_prepare) {
        int prc = finish(h, results[PREPARE_R], NULL);
        results[PREPARE_R] = NULL;
        if (prc == RT_OK) e->prepared = true;
        if (rc == RT_OK) rc = prc;
    }
    PGresult *statement = results[STATEMENT_R];
    results[STATEMENT_R] = NULL;
    if (rc == RT_OK) {
        rc = finish(h, statement, out);
        if (rc == RT_EDB && named) (void)forget_if_stale(h, e);
    } else {
        PQclear(statement);
    }
    if (commit && rc != RT_OK) {
        /* The server skipped COMMIT (the pipeline was aborted): the transaction is still
         * open, aborted, for the caller to roll back. */
        PQclear(results[COMMIT_R]);
        *commit_ok = false;
    } else if (commit) {
        PGresult *res = results[COMMIT_R];
        int crc = finish(h, res, &res);
        *commit_ok = crc == RT_OK && !strcmp(PQcmdStatus(res), "COMMIT");
        if (crc == RT_OK) PQclear(res);
        rc = crc;
        h->in_transaction = false; /* committed, rolled back or lost */
    }
    if (rc != RT_OK && out && *out) {
        PQclear(*out);
        *out = NULL;
    }
    return rc;
}

int rt_pg_begin_exec(rt_pg *h, const char *sql, int nparams, const char *const *params,
                     PGresult **out)
{
    if (out) *out = NULL;
    if (h->in_transaction) {
        rt_set_errstr(h->errstr, "a transaction is already open");
        return RT_EINVAL;
    }
    int rc = prepare(h);
    if (rc != RT_OK) return rc;
    return exec_pipelined(h, true, sql, nparams, params, false, out, NULL);
}

int rt_pg_exec_commit(rt_pg *h, const char *sql, int nparams, const char *const *params,
                      PGresult **out)
{
    if (out) *out = NULL;
    if (!h->in_transaction) {
        rt_set_errstr(h->errstr, "no transaction is open");
        return RT_EINVAL;
    }
    int rc = prepare(h);
    if (rc != RT_OK) {
        h->in_transaction = false; /* the connection is gone, and the transaction with it */
        return rc;
    }
    bool committed = false;
    rc = exec_pipelined(h, false, sql, nparams, params, true, out, &committed);
    if (rc != RT_OK && h->in_transaction) {
        /* The statement failed: roll back here, keeping its error for the caller. */
        char errstr[RT_ERRSTR_SIZE], sqlstate[6];
        memcpy(errstr, h->errstr, sizeof errstr);
        memcpy(sqlstate, h->sqlstate, sizeof sqlstate);
        int ignored = rt_pg_rollback(h);
        (void)ignored;
        memcpy(h->errstr, errstr, sizeof errstr);
        memcpy(h->sqlstate, sqlstate, sizeof sqlstate);
    } else if (rc == RT_OK && !committed) {
        rt_set_errstr(h->errstr, "the transaction was rolled back: an earlier statement in it "
                                 "failed");
        if (out && *out) {
            PQclear(*out);
            *out = NULL;
        }
        rc = RT_EDB;
    }
    return rc;
}

int rt_pg_rollback(rt_pg *h)
{
    if (!h->in_transaction) return RT_OK;
    h->in_transaction = false;
    if (PQstatus(h->conn) != CONNECTION_OK) return reset(h);
    return rt_pg_exec(h, "ROLLBACK", 0, NULL, NULL);
}

static int array_reserve(rt_pg_array *a, size_t more)
{
    if (a->len + more + 2 <= a->cap) return RT_OK;
    size_t cap = a->cap ? a->cap : 256;
    while (a->len + more + 2 > cap) cap *= 2;
    char *text = realloc(a->text, cap);
    if (!text) return RT_ENOMEM;
    a->text = text;
    a->cap = cap;
    return RT_OK;
}

int rt_pg_array_add(rt_pg_array *a, const char *value)
{
    size_t n = value ? strlen(value) : 0;
    /* "{" or ",", then NULL or the quoted value with " and \ escaped (at most 2n + 2). */
    if (array_reserve(a, 2 * n + 8) != RT_OK) return RT_ENOMEM;
    a->text[a->len++] = a->count ? ',' : '{';
    if (!value) {
        memcpy(a->text + a->len, "NULL", 4);
        a->len += 4;
    } else {
        a->text[a->len++] = '"';
        for (const char *c = value; *c; c++) {
            if (*c == '"' || *c == '\\') a->text[a->len++] = '\\';
            a->text[a->len++] = *c;
        }
        a->text[a->len++] = '"';
    }
    a->count++;
    return RT_OK;
}

const char *rt_pg_array_text(rt_pg_array *a)
{
    if (array_reserve(a, 2) != RT_OK) return NULL;
    if (!a->count) {
        memcpy(a->text, "{}", 3);
    } else {
        a->text[a->len] = '}';
        a->text[a->len + 1] = '\0';
    }
    return a->text;
}

void rt_pg_array_free(rt_pg_array *a)
{
    if (!a) return;
    free(a->text);
    memset(a, 0, sizeof *a);
}
