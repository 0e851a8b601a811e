/* SPDX-License-Identifier: MPL-2.0 */
/* test_history_batch.c - rt_history_store_batch, the writer retrig-history uses for many
 * runs at once (a multi-row INSERT of the runs, a COPY of their groups and tests), on the
 * local Postgres in a database of its own: it writes what rt_history_store writes, a run
 * seen twice (in one batch or a later one) once, text with tabs, newlines and backslashes
 * intact through COPY, and nothing at all when one run has a bad value. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/history.h"
#include "common/io/history_store.h"
#include "support/classify_harness.h"

#define ES_FAIL "errorsummary/mochitest-browser-chrome_errorsummary.log"

static int setup(void **state)
{
    *state = rt_ch_new();
    return 0;
}

static int teardown(void **state)
{
    rt_ch_free(*state);
    return 0;
}

static void fixture_rows(rt_history_rows *rows)
{
    size_t len = 0;
    char *text = rt_test_read_file(rt_test_fixture(ES_FAIL), &len);
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, text, len), RT_OK);
    assert_int_equal(rt_history_rows_from_errorsummary(&es, rows), RT_OK);
    assert_true(rows->ngroups > 0 && rows->ntests > 0);
    rt_errorsummary_free(&es);
    free(text);
}

static rt_history_run a_run(const char *run_key, const char *run_at)
{
    return (rt_history_run){.source = "taskcluster",
                            .run_key = run_key,
                            .repository = "gecko",
                            .project = "try",
                            .branch = "try",
                            .branch_key = "try:7",
                            .push = "7",
                            .revision = "abc",
                            .platform = "linux1804-64",
                            .label = "test-linux1804-64/opt-mochitest-1",
                            .run_at = run_at,
                            .complete_results = false};
}

static int store_batch(rt_ch *h, const rt_history_run *runs, const rt_history_rows *const *rows,
                       size_t n, bool *inserted, char *errstr)
{
    assert_int_equal(rt_pg_begin(h->pg), RT_OK);
    int rc = rt_history_store_batch(h->pg, runs, rows, n, inserted, errstr);
    if (rc == RT_OK)
        assert_int_equal(rt_pg_commit(h->pg), RT_OK);
    else
        assert_int_equal(rt_pg_rollback(h->pg), RT_OK);
    return rc;
}

static long long count(rt_ch *h, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    return rt_ch_sql_int(h, sql, 0, NULL);
}

static void test_batch_writes_the_same_rows_as_the_single_run_writer(void **state)
{
    rt_ch *h = *state;
    rt_history_rows rows;
    fixture_rows(&rows);
    rt_history_run single = a_run("single/0", "2024-05-01T10:00:00Z");
    bool inserted = false;
    assert_int_equal(rt_pg_begin(h->pg), RT_OK);
    assert_int_equal(rt_history_store(h->pg, &single, &rows, false, &inserted), RT_OK);
    assert_int_equal(rt_pg_commit(h->pg), RT_OK);
    assert_true(inserted);

    rt_history_run batch[] = {a_run("batch/0", "2024-05-01T10:00:00Z")};
    const rt_history_rows *brows[] = {&rows};
    bool binserted[1];
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(store_batch(h, batch, brows, 1, binserted, err), RT_OK);
    assert_true(binserted[0]);

    /* Every group and test row of one run is in the other, and the counts match. */
    static const char diff_groups[] =
        "SELECT count(*) FROM (SELECT group_name, status, duration_ms, failed FROM history_groups"
        " g JOIN history_runs r ON r.id = g.run_id WHERE r.run_key = $1 EXCEPT"
        " SELECT group_name, status, duration_ms, failed FROM history_groups g JOIN history_runs"
        " r ON r.id = g.run_id WHERE r.run_key = $2) d";
    static const char diff_tests[] =
        "SELECT count(*) FROM (SELECT test, group_name, status, expected, failed, message,"
        " signature, signature_hash FROM history_tests t JOIN history_runs r ON r.id = t.run_id"
        " WHERE r.run_key = $1 EXCEPT SELECT test, group_name, status, expected, failed,"
        " message, signature, signature_hash FROM history_tests t JOIN history_runs r"
        " ON r.id = t.run_id WHERE r.run_key = $2) d";
    const char *ab[] = {"single/0", "batch/0"}, *ba[] = {"batch/0", "single/0"};
    assert_int_equal(rt_ch_sql_int(h, diff_groups, 2, ab), 0);
    assert_int_equal(rt_ch_sql_int(h, diff_groups, 2, ba), 0);
    assert_int_equal(rt_ch_sql_int(h, diff_tests, 2, ab), 0);
    assert_int_equal(rt_ch_sql_int(h, diff_tests, 2, ba), 0);
    assert_int_equal(count(h, "history_groups"), 2 * (long long)rows.ngroups);
    assert_int_equal(count(h, "history_tests"), 2 * (long long)rows.ntests);
    rt_history_rows_free(&rows);
}

static void test_a_run_twice_in_a_batch_or_redelivered_later_is_written_once(void **state)
{
    rt_ch *h = *state;
    rt_history_rows rows;
    fixture_rows(&rows);
    rt_history_run runs[] = {a_run("x/0", "2024-05-01T10:00:00Z"),
                             a_run("y/0", "2024-05-01T11:00:00Z"),
                             a_run("x/0", "2024-05-01T10:00:00Z")};
    const rt_history_rows *brows[] = {&rows, &rows, &rows};
    bool inserted[3];
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(store_batch(h, runs, brows, 3, inserted, err), RT_OK);
    assert_true(inserted[0]);
    assert_true(inserted[1]);
    assert_false(inserted[2]);
    assert_int_equal(count(h, "history_runs"), 2);
    assert_int_equal(count(h, "history_groups"), 2 * (long long)rows.ngroups);
    assert_int_equal(count(h, "history_tests"), 2 * (long long)rows.ntests);

    /* The same messages again (a redelivery): nothing new. */
    assert_int_equal(store_batch(h, runs, brows, 2, inserted, err), RT_OK);
    assert_false(inserted[0]);
    assert_false(inserted[1]);
    assert_int_equal(count(h, "history_runs"), 2);
    assert_int_equal(count(h, "history_groups"), 2 * (long long)rows.ngroups);
    assert_int_equal(count(h, "history_tests"), 2 * (long long)rows.ntests);
    rt_history_rows_free(&rows);
}

static void test_tabs_newlines_and_backslashes_survive_copy(void **state)
{
    rt_ch *h = *state;
    rt_history_rows rows = {0};
    const char *message = "line one\twith a tab\nline two \\ with a backslash\r\n\\N";
    assert_int_equal(rt_history_rows_add_test(&rows, "dir\\odd\ttest.js", "grp\\1", "FAIL", "PASS",
                                              true, NULL, message),
                     RT_OK);
    assert_int_equal(rt_history_rows_add_group(&rows, "plain", NULL, -1, false), RT_OK);
    rt_history_run runs[] = {a_run("esc/0", "2024-05-01T10:00:00Z")};
    const rt_history_rows *brows[] = {&rows};
    bool inserted[1];
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(store_batch(h, runs, brows, 1, inserted, err), RT_OK);
    const char *params[] = {"dir\\odd\ttest.js", message};
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM history_tests WHERE test = $1 AND"
                                   " message = $2 AND group_name = 'grp\\1' AND expected = 'PASS'",
                                   2, params),
                     1);
    /* NULLs stay NULL: the group that never finished has no status or duration. */
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM history_groups WHERE group_name = 'plain'"
                                   " AND status IS NULL AND duration_ms IS NULL AND NOT failed",
                                   0, NULL),
                     1);
    rt_history_rows_free(&rows);
}

/* Fields cut at RT_ES_MAX_FIELD inside a 3-byte character: Postgres refused the half
 * character, failed the batch and the run was dead-lettered. Cut at a boundary, it is
 * stored, with its message. */
static void test_fields_cut_inside_a_character_are_stored(void **state)
{
    rt_ch *h = *state;
    size_t n = 1 + 3 * 700; /* 'x', then euros across the cut at RT_ES_MAX_FIELD */
    char *text = malloc(n + 1);
    assert_non_null(text);
    text[0] = 'x';
    for (size_t i = 1; i + 3 <= n; i += 3) memcpy(text + i, "\xe2\x82\xac", 3);
    text[n] = '\0';
    size_t size = 3 * n + 512;
    char *doc = malloc(size);
    assert_non_null(doc);
    snprintf(doc, size,
             "{\"action\":\"test_result\",\"test\":\"dom/a/%s\",\"status\":\"FAIL\","
             "\"expected\":\"PASS\",\"group\":\"dom/a\",\"message\":\"%s\"}\n",
             text, text);
    rt_errorsummary es = {0};
    assert_int_equal(rt_errorsummary_add(&es, doc, strlen(doc)), RT_OK);
    rt_history_rows rows;
    assert_int_equal(rt_history_rows_from_errorsummary(&es, &rows), RT_OK);
    rt_history_run batch[] = {a_run("utf8/0", "2024-05-01T10:00:00Z")};
    const rt_history_rows *brows[] = {&rows};
    bool inserted[1];
    char err[RT_ERRSTR_SIZE] = "";
    int rc = store_batch(h, batch, brows, 1, inserted, err);
    if (rc != RT_OK) fail_msg("batch refused: %s", err);
    assert_int_equal(rt_ch_sql_int(h,
                                   "SELECT count(*) FROM history_tests WHERE message LIKE"
                                   " '%\xe2\x82\xac' AND octet_length(message) <= 2048",
                                   0, NULL),
                     1);
    rt_history_rows_free(&rows);
    rt_errorsummary_free(&es);
    free(doc);
    free(text);
}

static void test_a_bad_value_fails_the_whole_batch_and_writes_nothing(void **state)
{
    rt_ch *h = *state;
    rt_history_rows rows;
    fixture_rows(&rows);
    rt_history_run runs[] = {a_run("good/0", "2024-05-01T10:00:00Z"), a_run("bad/0", "not a time")};
    const rt_history_rows *brows[] = {&rows, &rows};
    bool inserted[2] = {true, true};
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(store_batch(h, runs, brows, 2, inserted, err), RT_EDB);
    assert_non_null(strstr(err, "not a time"));
    assert_false(inserted[0]);
    assert_false(inserted[1]);
    assert_int_equal(count(h, "history_runs"), 0);
    assert_int_equal(count(h, "history_groups"), 0);
    rt_history_rows_free(&rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_batch_writes_the_same_rows_as_the_single_run_writer,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_run_twice_in_a_batch_or_redelivered_later_is_written_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tabs_newlines_and_backslashes_survive_copy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fields_cut_inside_a_character_are_stored, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_bad_value_fails_the_whole_batch_and_writes_nothing,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
