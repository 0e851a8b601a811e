/* SPDX-License-Identifier: MPL-2.0 */
/* test_pg_columns.c - reading a query result by column name (rt_pg_columns and the typed
 * field readers of common/io/pg.h), on results built in memory with libpq's own calls, so
 * that no server is needed. */
#include "support/util.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* A result with the named text columns and one row of values (NULL: SQL NULL). */
static PGresult *result(const char *const *names, const char *const *values, int n)
{
    PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    assert_non_null(res);
    PGresAttDesc *attrs = calloc((size_t)n, sizeof *attrs);
    assert_non_null(attrs);
    for (int i = 0; i < n; i++) {
        attrs[i].name = (char *)names[i];
        attrs[i].typid = 25; /* text */
        attrs[i].typlen = -1;
        attrs[i].atttypmod = -1;
    }
    assert_int_equal(PQsetResultAttrs(res, n, attrs), 1);
    free(attrs);
    for (int i = 0; i < n; i++)
        assert_int_equal(
            PQsetvalue(res, 0, i, (char *)values[i], values[i] ? (int)strlen(values[i]) : -1), 1);
    return res;
}

/* The numbers follow the names, whatever the order of the SELECT. */
static void test_columns_are_found_by_name_in_any_order(void **state)
{
    (void)state;
    static const char *const names[] = {"runs", "test", "flaky", "failure_rate"};
    static const char *const values[] = {"42", "dom/a.html", "t", "0.25"};
    PGresult *res = result(names, values, 4);
    enum { C_TEST, C_RUNS, C_RATE, C_FLAKY, C_N };
    static const char *const wanted[C_N] = {"test", "runs", "failure_rate", "flaky"};
    int c[C_N];
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_pg_columns(res, wanted, C_N, c, err), RT_OK);
    assert_int_equal(c[C_TEST], 1);
    assert_int_equal(c[C_RUNS], 0);
    assert_string_equal(rt_pg_text(res, 0, c[C_TEST]), "dom/a.html");
    assert_int_equal(rt_pg_int(res, 0, c[C_RUNS]), 42);
    assert_true(rt_pg_float(res, 0, c[C_RATE]) == 0.25);
    assert_true(rt_pg_bool(res, 0, c[C_FLAKY]));
    PQclear(res);
}

/* A column the SELECT does not have (a renamed column, an expression without an alias) is
 * an error that names it, not a read of whatever sits at that position. */
static void test_a_missing_column_is_an_error_naming_it(void **state)
{
    (void)state;
    static const char *const names[] = {"test", "to_char"};
    static const char *const values[] = {"x", "2024-05-01T00:00:00Z"};
    PGresult *res = result(names, values, 2);
    static const char *const wanted[] = {"test", "first_failure_at"};
    int c[2];
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_pg_columns(res, wanted, 2, c, err), RT_EINVAL);
    assert_non_null(strstr(err, "first_failure_at"));
    PQclear(res);
}

/* SQL NULL reads as NULL text, 0, 0.0 and false. */
static void test_null_fields_read_as_empty_values(void **state)
{
    (void)state;
    static const char *const names[] = {"a", "b", "c", "d"};
    static const char *const values[] = {NULL, NULL, NULL, NULL};
    PGresult *res = result(names, values, 4);
    assert_null(rt_pg_text(res, 0, 0));
    assert_int_equal(rt_pg_int(res, 0, 1), 0);
    assert_true(rt_pg_float(res, 0, 2) == 0.0);
    assert_false(rt_pg_bool(res, 0, 3));
    PQclear(res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_are_found_by_name_in_any_order),
        cmocka_unit_test(test_a_missing_column_is_an_error_naming_it),
        cmocka_unit_test(test_null_fields_read_as_empty_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
