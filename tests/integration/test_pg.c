/* SPDX-License-Identifier: MPL-2.0 */
/* test_pg.c - common/pg against the shared local Postgres: parameters, transactions, SQLSTATEs,
 * resets after the server dropped the connection, and no password in error messages.
 * Uses only temporary tables and read-only queries, so it can run beside other tests. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/io/pg.h"

typedef struct fixture {
    rt_config cfg;
    rt_pg *pg;
    rt_pg *admin;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_non_null(f);
    assert_int_equal(rt_config_load(&f->cfg, NULL, errstr), RT_OK);
    if (rt_pg_connect(&f->pg, f->cfg.database_url, "test", errstr) != RT_OK) fail_msg("%s", errstr);
    if (rt_pg_connect(&f->admin, f->cfg.database_url, "test-admin", errstr) != RT_OK)
        fail_msg("%s", errstr);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rt_pg_free(f->pg);
    rt_pg_free(f->admin);
    rt_config_free(&f->cfg);
    free(f);
    return 0;
}

static char *value_of(rt_pg *pg, const char *sql, int nparams, const char *const *params)
{
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, sql, nparams, params, &res);
    if (rc != RT_OK) fail_msg("%s: %s: %s", sql, rt_strerror(rc), rt_pg_errstr(pg));
    char *value = strdup(PQgetisnull(res, 0, 0) ? "(null)" : PQgetvalue(res, 0, 0));
    PQclear(res);
    return value;
}

/* Ends the server process behind f->pg and waits until it is gone. */
static void kill_backend(fixture *f)
{
    char pid[16];
    snprintf(pid, sizeof pid, "%d", PQbackendPID(rt_pg_conn(f->pg)));
    const char *params[] = {pid};
    char *done = value_of(f->admin, "SELECT pg_terminate_backend($1::int, 10000)", 1, params);
    assert_string_equal(done, "t");
    free(done);
}

static void test_parameters_are_sent_apart_from_sql(void **state)
{
    fixture *f = *state;
    const char *params[] = {"O'Brien; DROP TABLE x", NULL};
    char *v = value_of(f->pg, "SELECT $1::text || coalesce($2::text, ' and NULL')", 2, params);
    assert_string_equal(v, "O'Brien; DROP TABLE x and NULL");
    free(v);
    v = value_of(f->pg, "SELECT current_setting('application_name')", 0, NULL);
    assert_string_equal(v, "retrig-test");
    free(v);
}

/* rt_pg_array: every element comes back from Postgres as it went in, NULLs included. */
static void test_array_parameter_round_trips_quotes_backslashes_and_nulls(void **state)
{
    fixture *f = *state;
    static const char *const values[] = {"plain", "with \"quotes\"",         "back\\slash\\",
                                         NULL,    "{braces},commas",         "",
                                         "NULL",  "caf\xc3\xa9 \xe2\x9c\x93"};
    size_t n = sizeof values / sizeof values[0];
    rt_pg_array a = {0};
    for (size_t i = 0; i < n; i++) assert_int_equal(rt_pg_array_add(&a, values[i]), RT_OK);
    const char *params[] = {rt_pg_array_text(&a)};
    PGresult *res = NULL;
    assert_int_equal(rt_pg_exec(f->pg,
                                "SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS t(v, i)"
                                " ORDER BY i",
                                1, params, &res),
                     RT_OK);
    assert_int_equal(PQntuples(res), (int)n);
    for (size_t i = 0; i < n; i++) {
        if (!values[i]) {
            assert_true(PQgetisnull(res, (int)i, 0));
        } else {
            assert_false(PQgetisnull(res, (int)i, 0));
            assert_string_equal(PQgetvalue(res, (int)i, 0), values[i]);
        }
    }
    PQclear(res);
    rt_pg_array_free(&a);
    rt_pg_array empty = {0};
    const char *eparams[] = {rt_pg_array_text(&empty)};
    char *count = value_of(f->pg, "SELECT cardinality($1::text[])", 1, eparams);
    assert_string_equal(count, "0");
    free(count);
    rt_pg_array_free(&empty);
}

static void test_sql_error_carries_sqlstate(void **state)
{
    fixture *f = *state;
    assert_int_equal(rt_pg_exec(f->pg, "SELECT * FROM no_such_table_here", 0, NULL, NULL), RT_EDB);
    assert_string_equal(rt_pg_sqlstate(f->pg), "42P01");
    assert_non_null(strstr(rt_pg_errstr(f->pg), "no_such_table_here"));

    assert_int_equal(rt_pg_exec(f->pg, "CREATE TEMP TABLE t (k text PRIMARY KEY)", 0, NULL, NULL),
                     RT_OK);
    const char *params[] = {"same"};
    assert_int_equal(rt_pg_exec(f->pg, "INSERT INTO t VALUES ($1)", 1, params, NULL), RT_OK);
    assert_int_equal(rt_pg_exec(f->pg, "INSERT INTO t VALUES ($1)", 1, params, NULL), RT_ECONFLICT);
    assert_string_equal(rt_pg_sqlstate(f->pg), RT_PG_UNIQUE_VIOLATION);

    /* a later success clears the SQLSTATE */
    assert_int_equal(rt_pg_exec(f->pg, "SELECT 1", 0, NULL, NULL), RT_OK);
    assert_string_equal(rt_pg_sqlstate(f->pg), "");
}

static void test_commit_after_failed_statement_reports_rollback(void **state)
{
    fixture *f = *state;
    assert_int_equal(rt_pg_exec(f->pg, "CREATE TEMP TABLE t2 (k int)", 0, NULL, NULL), RT_OK);
    assert_int_equal(rt_pg_begin(f->pg), RT_OK);
    assert_int_equal(rt_pg_exec(f->pg, "INSERT INTO t2 VALUES (1)", 0, NULL, NULL), RT_OK);
    assert_int_equal(rt_pg_exec(f->pg, "SELECT 1/0", 0, NULL, NULL), RT_EDB);
    assert_int_equal(rt_pg_commit(f->pg), RT_EDB);
    assert_non_null(strstr(rt_pg_errstr(f->pg), "rolled back"));
    assert_false(rt_pg_in_transaction(f->pg));
    char *v = value_of(f->pg, "SELECT count(*) FROM t2", 0, NULL);
    assert_string_equal(v, "0");
    free(v);
}

static void test_idle_connection_dropped_by_server_is_reset_before_next_statement(void **state)
{
    fixture *f = *state;
    int old_pid = PQbackendPID(rt_pg_conn(f->pg));
    kill_backend(f);
    char *v = value_of(f->pg, "SELECT 41 + 1", 0, NULL);
    assert_string_equal(v, "42");
    free(v);
    assert_int_not_equal(PQbackendPID(rt_pg_conn(f->pg)), old_pid);
}

static void test_connection_lost_inside_transaction_is_an_error_and_rollback_recovers(void **state)
{
    fixture *f = *state;
    assert_int_equal(rt_pg_begin(f->pg), RT_OK);
    kill_backend(f);
    /* no silent reset: the transaction's earlier work is gone, the caller must redo it */
    assert_int_equal(rt_pg_exec(f->pg, "SELECT 1", 0, NULL, NULL), RT_ECONN);
    assert_true(rt_pg_in_transaction(f->pg));
    assert_int_equal(rt_pg_rollback(f->pg), RT_OK);
    assert_false(rt_pg_in_transaction(f->pg));
    char *v = value_of(f->pg, "SELECT 'again'", 0, NULL);
    assert_string_equal(v, "again");
    free(v);
}

/* rt_pg_begin_exec and rt_pg_exec_commit: the same outcomes as the calls they stand for,
 * run three times so that the third goes through the prepared statement. */
static void test_begin_exec_and_exec_commit_commit_or_roll_back_as_separate_calls(void **state)
{
    fixture *f = *state;
    assert_int_equal(rt_pg_exec(f->pg, "CREATE TEMP TABLE t3 (k int PRIMARY KEY)", 0, NULL, NULL),
                     RT_OK);
    for (int round = 0; round < 3; round++) {
        char k[16], k2[16];
        snprintf(k, sizeof k, "%d", 10 * round + 1);
        snprintf(k2, sizeof k2, "%d", 10 * round + 2);
        const char *p1[] = {k}, *p2[] = {k2};
        PGresult *res = NULL;
        assert_int_equal(
            rt_pg_begin_exec(f->pg, "INSERT INTO t3 VALUES ($1::int) RETURNING k", 1, p1, &res),
            RT_OK);
        assert_true(rt_pg_in_transaction(f->pg));
        assert_string_equal(PQgetvalue(res, 0, 0), k);
        PQclear(res);
        /* The insert did not commit on its own: its session holds a transaction id. */
        char pid[16];
        snprintf(pid, sizeof pid, "%d", PQbackendPID(rt_pg_conn(f->pg)));
        const char *pp[] = {pid};
        char *open = value_of(f->admin,
                              "SELECT count(*) FROM pg_locks WHERE pid = $1::int"
                              " AND locktype = 'transactionid' AND granted",
                              1, pp);
        assert_string_equal(open, "1");
        free(open);
        assert_int_equal(
            rt_pg_exec_commit(f->pg, "INSERT INTO t3 VALUES ($1::int) RETURNING k", 1, p2, &res),
            RT_OK);
        assert_false(rt_pg_in_transaction(f->pg));
        assert_string_equal(PQgetvalue(res, 0, 0), k2);
        PQclear(res);
    }
    char *v = value_of(f->pg, "SELECT string_agg(k::text, ',' ORDER BY k) FROM t3", 0, NULL);
    assert_string_equal(v, "1,2,11,12,21,22");
    free(v);

    /* The committing statement fails: nothing of the transaction stays, none is left open,
     * and the error is the statement's. */
    const char *dup[] = {"1"}, *fresh[] = {"99"};
    assert_int_equal(
        rt_pg_begin_exec(f->pg, "INSERT INTO t3 VALUES ($1::int) RETURNING k", 1, fresh, NULL),
        RT_OK);
    PGresult *res = (PGresult *)1;
    assert_int_equal(
        rt_pg_exec_commit(f->pg, "INSERT INTO t3 VALUES ($1::int) RETURNING k", 1, dup, &res),
        RT_ECONFLICT);
    assert_null(res);
    assert_string_equal(rt_pg_sqlstate(f->pg), "23505");
    assert_false(rt_pg_in_transaction(f->pg));
    v = value_of(f->pg, "SELECT count(*) FROM t3 WHERE k = 99", 0, NULL);
    assert_string_equal(v, "0");
    free(v);

    /* The opening statement fails: the transaction is open and aborted; rollback ends it. */
    assert_int_equal(rt_pg_begin_exec(f->pg, "SELECT 1/0", 0, NULL, NULL), RT_EDB);
    assert_string_equal(rt_pg_sqlstate(f->pg), "22012");
    assert_true(rt_pg_in_transaction(f->pg));
    assert_int_equal(rt_pg_exec_commit(f->pg, "SELECT 1", 0, NULL, NULL), RT_EDB);
    assert_false(rt_pg_in_transaction(f->pg));

    /* Misuse is refused without touching the session. */
    assert_int_equal(rt_pg_exec_commit(f->pg, "SELECT 1", 0, NULL, NULL), RT_EINVAL);
    assert_int_equal(rt_pg_begin(f->pg), RT_OK);
    assert_int_equal(rt_pg_begin_exec(f->pg, "SELECT 1", 0, NULL, NULL), RT_EINVAL);
    assert_int_equal(rt_pg_rollback(f->pg), RT_OK);

    /* A connection lost before the commit: an error, and the handle works again after. */
    assert_int_equal(rt_pg_begin_exec(f->pg, "SELECT 1", 0, NULL, NULL), RT_OK);
    kill_backend(f);
    assert_int_equal(rt_pg_exec_commit(f->pg, "SELECT 2", 0, NULL, NULL), RT_ECONN);
    assert_false(rt_pg_in_transaction(f->pg));
    v = value_of(f->pg, "SELECT 'back'", 0, NULL);
    assert_string_equal(v, "back");
    free(v);
}

/* How many statements this session has prepared (pg_prepared_statements), asked with
 * libpq directly: through rt_pg_exec the question would be prepared too. */
static int prepared_count(rt_pg *pg)
{
    PGresult *res = PQexec(rt_pg_conn(pg), "SELECT count(*) FROM pg_prepared_statements");
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    int n = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    return n;
}

static void expect_upper(rt_pg *pg, const char *sql, const char *param, const char *want)
{
    const char *params[] = {param};
    char *v = value_of(pg, sql, 1, params);
    assert_string_equal(v, want);
    free(v);
}

static void test_statements_run_again_are_prepared_once_per_session(void **state)
{
    fixture *f = *state;
    static const char upper[] = "SELECT upper($1::text)";
    /* first use: unprepared; second: prepared; later ones reuse it */
    expect_upper(f->pg, upper, "a'b", "A'B");
    assert_int_equal(prepared_count(f->pg), 0);
    expect_upper(f->pg, upper, "c", "C");
    assert_int_equal(prepared_count(f->pg), 1);
    for (int i = 0; i < 3; i++) expect_upper(f->pg, upper, "d", "D");
    assert_int_equal(prepared_count(f->pg), 1);
    /* another text is another statement; transaction control is never prepared */
    expect_upper(f->pg, "SELECT lower($1::text)", "E", "e");
    expect_upper(f->pg, "SELECT lower($1::text)", "F", "f");
    assert_int_equal(prepared_count(f->pg), 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rt_pg_begin(f->pg), RT_OK);
        assert_int_equal(rt_pg_commit(f->pg), RT_OK);
    }
    assert_int_equal(prepared_count(f->pg), 2);

    /* the server ended the session: the new one prepares them again */
    kill_backend(f);
    expect_upper(f->pg, upper, "g", "G");
    assert_int_equal(prepared_count(f->pg), 1);

    /* a pooler's DISCARD ALL dropped it behind our back: no error, prepared again later */
    assert_int_equal(rt_pg_exec(f->pg, "DISCARD ALL", 0, NULL, NULL), RT_OK);
    assert_int_equal(prepared_count(f->pg), 0);
    expect_upper(f->pg, upper, "h", "H");
    expect_upper(f->pg, upper, "i", "I");
    assert_int_equal(prepared_count(f->pg), 1);

    /* a migration changed the columns a prepared statement returns */
    assert_int_equal(rt_pg_exec(f->pg, "CREATE TEMP TABLE t3 (a int)", 0, NULL, NULL), RT_OK);
    static const char star[] = "SELECT * FROM t3 WHERE $1::int IS NOT NULL";
    const char *one[] = {"1"};
    for (int i = 0; i < 2; i++) assert_int_equal(rt_pg_exec(f->pg, star, 1, one, NULL), RT_OK);
    assert_int_equal(rt_pg_exec(f->pg, "ALTER TABLE t3 ADD COLUMN b int", 0, NULL, NULL), RT_OK);
    PGresult *res = NULL;
    assert_int_equal(rt_pg_exec(f->pg, star, 1, one, &res), RT_OK);
    assert_int_equal(PQnfields(res), 2);
    PQclear(res);

    /* errors are reported as unprepared ones are, with the SQLSTATE, every time */
    static const char divide[] = "SELECT 1/$1::int";
    const char *zero[] = {"0"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rt_pg_exec(f->pg, divide, 1, zero, NULL), RT_EDB);
        assert_string_equal(rt_pg_sqlstate(f->pg), "22012");
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rt_pg_exec(f->pg, "SELEKT $1", 1, zero, NULL), RT_EDB);
        assert_string_equal(rt_pg_sqlstate(f->pg), "42601");
    }
}

static void test_wrong_password_error_names_server_but_not_password(void **state)
{
    (void)state;
    rt_pg *pg = (rt_pg *)&pg;
    char errstr[RT_ERRSTR_SIZE] = "";
    const char *url = "postgresql://retrig:Wr0ngPassw0rdXYZ@127.0.0.1:5433/retrig";
    assert_int_equal(rt_pg_connect(&pg, url, "test", errstr), RT_ECONN);
    assert_null(pg);
    assert_non_null(strstr(errstr, "127.0.0.1"));
    assert_non_null(strstr(errstr, "5433"));
    assert_null(strstr(errstr, "Wr0ngPassw0rdXYZ"));

    assert_int_equal(rt_pg_connect(&pg,
                                   "host=127.0.0.1 port=5433 password=Wr0ngPassw0rdXYZ "
                                   "user=retrig dbname=retrig",
                                   "test", errstr),
                     RT_ECONN);
    assert_null(strstr(errstr, "Wr0ngPassw0rdXYZ"));

    /* a URL libpq cannot parse is quoted back redacted */
    assert_int_equal(
        rt_pg_connect(&pg, "postgresql://retrig:Wr0ngPassw0rdXYZ@[::1:5433/retrig", "test", errstr),
        RT_EINVAL);
    assert_null(strstr(errstr, "Wr0ngPassw0rdXYZ"));
}

int main(void)
{
#define PG_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        PG_TEST(test_parameters_are_sent_apart_from_sql),
        PG_TEST(test_array_parameter_round_trips_quotes_backslashes_and_nulls),
        PG_TEST(test_sql_error_carries_sqlstate),
        PG_TEST(test_commit_after_failed_statement_reports_rollback),
        PG_TEST(test_idle_connection_dropped_by_server_is_reset_before_next_statement),
        PG_TEST(test_connection_lost_inside_transaction_is_an_error_and_rollback_recovers),
        PG_TEST(test_statements_run_again_are_prepared_once_per_session),
        PG_TEST(test_begin_exec_and_exec_commit_commit_or_roll_back_as_separate_calls),
        cmocka_unit_test(test_wrong_password_error_names_server_but_not_password),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
