/* SPDX-License-Identifier: MPL-2.0 */
/* test_store_rows.c - the store's reader of result rows into typed structs
 * (common/store/rows.h), on results built in memory with libpq's own calls, so that no
 * server is needed. */
#include "support/util.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/errors.h"
#include "common/store/rows.h"

/* A result with the named text columns and nrows rows of values (NULL: SQL NULL). */
static PGresult *result(const char *const *names, int ncols, const char *const *values, int nrows)
{
    PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    assert_non_null(res);
    PGresAttDesc *attrs = calloc((size_t)ncols, sizeof *attrs);
    assert_non_null(attrs);
    for (int i = 0; i < ncols; i++) {
        attrs[i].name = (char *)names[i];
        attrs[i].typid = 25; /* text */
        attrs[i].typlen = -1;
        attrs[i].atttypmod = -1;
    }
    assert_int_equal(PQsetResultAttrs(res, ncols, attrs), 1);
    free(attrs);
    for (int r = 0; r < nrows; r++)
        for (int i = 0; i < ncols; i++) {
            const char *v = values[r * ncols + i];
            assert_int_equal(PQsetvalue(res, r, i, (char *)v, v ? (int)strlen(v) : -1), 1);
        }
    return res;
}

typedef struct row {
    char *test;
    char *note; /* NULL when SQL NULL */
    long long runs;
    double rate;
    bool flaky;
} row;

static const rt_row_field FIELDS[] = {
    RT_ROW_FIELD(row, test, RT_ROW_TEXT, "test"),
    RT_ROW_FIELD(row, note, RT_ROW_TEXT_NULL, "note"),
    RT_ROW_FIELD(row, runs, RT_ROW_INT, "runs"),
    RT_ROW_FIELD(row, rate, RT_ROW_FLOAT, "failure_rate"),
    RT_ROW_FIELD(row, flaky, RT_ROW_BOOL, "flaky"),
};
static const rt_row_spec SPEC = {FIELDS, sizeof FIELDS / sizeof FIELDS[0], sizeof(row)};

/* Each column lands in its member by name, whatever the SELECT's order; SQL NULL is "" for
 * a text, NULL for a nullable text, 0 for a number, false for a boolean. */
static void test_rows_are_read_by_column_name_into_their_members(void **state)
{
    (void)state;
    static const char *const names[] = {"flaky", "runs", "note", "failure_rate", "test", "extra"};
    static const char *const values[] = {"t",  "42", "seen", "0.25", "dom/a.html", "x",
                                         NULL, NULL, NULL,   NULL,   NULL,         NULL};
    PGresult *res = result(names, 6, values, 2);
    row *rows = NULL;
    size_t n = 0;
    assert_int_equal(rt_store_rows_read(res, &SPEC, &rows, &n), RT_OK);
    PQclear(res); /* the rows own their texts */
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].test, "dom/a.html");
    assert_string_equal(rows[0].note, "seen");
    assert_int_equal(rows[0].runs, 42);
    assert_true(rows[0].rate == 0.25);
    assert_true(rows[0].flaky);
    assert_string_equal(rows[1].test, "");
    assert_null(rows[1].note);
    assert_int_equal(rows[1].runs, 0);
    assert_true(rows[1].rate == 0.0);
    assert_false(rows[1].flaky);
    rt_store_rows_free(&SPEC, rows, n);
}

/* No row: an empty array, not NULL, that frees like any other. */
static void test_no_row_is_an_empty_array(void **state)
{
    (void)state;
    static const char *const names[] = {"test", "note", "runs", "failure_rate", "flaky"};
    PGresult *res = result(names, 5, NULL, 0);
    row *rows = NULL;
    size_t n = 7;
    assert_int_equal(rt_store_rows_read(res, &SPEC, &rows, &n), RT_OK);
    assert_non_null(rows);
    assert_int_equal(n, 0);
    rt_store_rows_free(&SPEC, rows, n);
    PQclear(res);
}

/* A column the statement does not give (a renamed column, an alias forgotten) is an error,
 * not a read of whatever sits at a position; nothing is returned. */
static void test_a_missing_column_is_an_error(void **state)
{
    (void)state;
    static const char *const names[] = {"test", "note", "runs", "rate", "flaky"};
    static const char *const values[] = {"a", "b", "1", "0.5", "f"};
    PGresult *res = result(names, 5, values, 1);
    static row sentinel;
    row *rows = &sentinel;
    size_t n = 3;
    assert_int_equal(rt_store_rows_read(res, &SPEC, &rows, &n), RT_EDB);
    assert_null(rows);
    assert_int_equal(n, 0);
    PQclear(res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_are_read_by_column_name_into_their_members),
        cmocka_unit_test(test_no_row_is_an_empty_array),
        cmocka_unit_test(test_a_missing_column_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
