/* SPDX-License-Identifier: MPL-2.0 */
/* pg.h - a Postgres connection (libpq) for parameterised statements and transactions.
 *
 * A handle connects from database_url (a libpq conninfo string or a postgresql:// URI)
 * with application_name=retrig-<program>, so a DBA can tell the workers apart in
 * pg_stat_activity. Statements always travel with separate text parameters
 * (PQexecParams); only migration files are run as whole scripts.
 *
 * Prepared statements: the second time a handle runs the same SELECT, INSERT, UPDATE,
 * DELETE or WITH text (or any text with parameters), it prepares it (PQprepare) and from
 * then on only executes it: the server parses and plans it once per session, not once per
 * call. Up to RT_PG_PREPARED_MAX texts per handle; a reset connection prepares them again,
 * and a statement the session lost (DISCARD ALL from a pooler) is prepared again too. So
 * a pooler in front of Postgres must keep sessions (PgBouncer pool_mode=session), as for
 * the advisory locks.
 *
 * Errors: RT_EDB with the server's message and SQLSTATE (rt_pg_sqlstate); two SQLSTATEs
 * callers act on get their own codes: a unique violation (23505) is RT_ECONFLICT, a
 * serialization failure or deadlock (40001, 40P01) is RT_ERETRY: roll back and run the
 * whole transaction again. A broken connection is RT_ECONN.
 *
 * Reconnecting: outside a transaction, a connection found broken (or closed by the server
 * while idle) is reset with PQreset before the next statement is sent. A statement that
 * fails in flight is not resent. Inside a transaction nothing is reset: the statement
 * returns RT_ECONN and the caller rolls back (rt_pg_rollback then resets) and retries the
 * whole transaction.
 *
 * The password never appears in errstr. A handle is not thread-safe: one per thread. */
#ifndef RETRIG_COMMON_PG_H
#define RETRIG_COMMON_PG_H

#include "common/not_core.h"

#include <stdbool.h>

#include <libpq-fe.h>

#include "common/core/errors.h"

#define RT_PG_UNIQUE_VIOLATION       "23505"
#define RT_PG_FOREIGN_KEY_VIOLATION  "23503"
#define RT_PG_CHECK_VIOLATION        "23514"
#define RT_PG_SERIALIZATION_FAILURE  "40001"
#define RT_PG_DEADLOCK_DETECTED      "40P01"
#define RT_PG_INSUFFICIENT_PRIVILEGE "42501"

typedef struct rt_pg rt_pg;

/* Connects to database_url as retrig-<program>. On failure returns RT_ECONN (RT_EINVAL
 * for a database_url libpq cannot parse, RT_ENOMEM) with a message in errstr
 * (RT_ERRSTR_SIZE bytes) that names the host and port but never the password; *out is
 * NULL. */
RT_MUSTCHECK int rt_pg_connect(rt_pg **out, const char *database_url, const char *program,
                               char *errstr);
/* Same, but connects to the database dbname instead of the one database_url names (for
 * tools and tests that create databases). */
RT_MUSTCHECK int rt_pg_connect_dbname(rt_pg **out, const char *database_url, const char *dbname,
                                      const char *program, char *errstr);
void rt_pg_free(rt_pg *h);

/* The reason for the last failure, "" when none. */
const char *rt_pg_errstr(const rt_pg *h);
/* The SQLSTATE of the last failed statement ("23505"), "" when the last failure was not
 * a server error (or there was none). */
const char *rt_pg_sqlstate(const rt_pg *h);
/* The underlying connection, for libpq calls this module does not wrap (PQescape*). */
PGconn *rt_pg_conn(rt_pg *h);
bool rt_pg_in_transaction(const rt_pg *h);

/* Reading a result by the names its SELECT gives the columns, not by their positions: the
 * numbers are looked up once per result (PQfnumber), and a row is read through them.
 *
 *     enum { C_TEST, C_RUNS, C_N };
 *     static const char *const COLS[C_N] = {"test", "runs"};
 *     int c[C_N];
 *     if (rt_pg_columns(res, COLS, C_N, c, errstr) != RT_OK) ...   (a name the result lacks)
 *     rt_pg_text(res, r, c[C_TEST]), rt_pg_int(res, r, c[C_RUNS])
 *
 * Names are compared as PQfnumber does: folded to lower case unless double-quoted, so an
 * expression needs an alias (AS first_failure_at). */
RT_MUSTCHECK int rt_pg_columns(const PGresult *res, const char *const *names, size_t n, int *cols,
                               char *errstr);
/* rt_pg_columns for code that treats a name the result lacks (a statement and its reader
 * that disagree) as a failed query: logged, the result cleared (*res NULL), RT_EDB. */
RT_MUSTCHECK int rt_pg_result_columns(PGresult **res, const char *const *names, size_t n,
                                      int *cols);
/* The text of a field, NULL when it is SQL NULL. */
const char *rt_pg_text(const PGresult *res, int row, int col);
/* A field as an integer (0 when NULL or not a number) or a float (0.0 likewise), and a
 * boolean (true for 't'). */
long long rt_pg_int(const PGresult *res, int row, int col);
double rt_pg_float(const PGresult *res, int row, int col);
bool rt_pg_bool(const PGresult *res, int row, int col);

#define RT_PG_PREPARED_MAX 256

/* Runs one statement with nparams text parameters ($1..$n; a NULL entry is SQL NULL).
 * When out is not NULL it receives the result (PGRES_TUPLES_OK or PGRES_COMMAND_OK) for
 * the caller to PQclear; on failure *out is NULL. */
RT_MUSTCHECK int rt_pg_exec(rt_pg *h, const char *sql, int nparams, const char *const *params,
                            PGresult **out);
/* Runs a whole SQL script (several statements, no parameters; comments only is fine). Only for
 * migration and SQL function files. */
RT_MUSTCHECK int rt_pg_exec_script(rt_pg *h, const char *sql);

/* A one-dimensional array parameter in Postgres's text form ({"a",NULL,"b\\"c"}), built
 * element by element: rows sent as one array per column (unnest) make a short statement. */
typedef struct rt_pg_array {
    char *text;
    size_t len, cap;
    size_t count;
} rt_pg_array;
/* Appends an element; NULL is SQL NULL. RT_OK or RT_ENOMEM. */
RT_MUSTCHECK int rt_pg_array_add(rt_pg_array *a, const char *value);
/* The parameter text ("{}" when empty); owned by a, NULL on ENOMEM. */
const char *rt_pg_array_text(rt_pg_array *a);
void rt_pg_array_free(rt_pg_array *a);

RT_MUSTCHECK int rt_pg_begin(rt_pg *h);
RT_MUSTCHECK int rt_pg_commit(rt_pg *h);
/* One round trip each (libpq pipeline mode), otherwise as the calls they stand for:
 * rt_pg_begin_exec is rt_pg_begin then rt_pg_exec (when BEGIN fails nothing is open; when
 * the statement fails the transaction is open and the caller rolls back), rt_pg_exec_commit
 * is rt_pg_exec then rt_pg_commit (inside an open transaction; when the statement fails the
 * transaction is rolled back and over, *out NULL). */
RT_MUSTCHECK int rt_pg_begin_exec(rt_pg *h, const char *sql, int nparams, const char *const *params,
                                  PGresult **out);
RT_MUSTCHECK int rt_pg_exec_commit(rt_pg *h, const char *sql, int nparams,
                                   const char *const *params, PGresult **out);
/* Rolls back; when the connection is broken the transaction is gone anyway, so this resets
 * the connection and returns RT_OK if that works. */
RT_MUSTCHECK int rt_pg_rollback(rt_pg *h);

#endif
