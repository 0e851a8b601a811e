/* SPDX-License-Identifier: MPL-2.0 */
/* junit.c - `retrig junit FILE... [--format table|json]`: what retrig would store of JUnit
 * XML reports (common/core/junit.h), offline, as `retrig errorsummary` replays the worker:
 * each test with its outcome, attempts and message, each testcase set aside and why, each
 * file refused and why. No database, no configuration needed. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "common/core/history.h"
#include "common/core/junit.h"
#include "common/io/hashkey.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig junit FILE... [--format table|json]\n"
            "Reads JUnit XML reports as retrig-collect-github and ingest-junit do and prints what\n"
            "would be stored, without a database: {\"files\": [{file, testcases, set_aside,\n"
            "aside: [reasons], error}], \"tests\": [{test, group, outcome, failed, attempts,\n"
            "message}]}. Outcomes: PASS, FAIL, ERROR, SKIP, FLAKY (failed, then passed on a\n"
            "rerun), DISABLED, COLLECTION_ERROR, BUILD_FAILED. JSON unless stdout is a terminal.\n"
            "Exit: 0 every file read, 1 a file refused or unreadable, 2 usage.\n");
}

/* Text of a report for the terminal: control characters, ESC, C1 and bidi overrides escaped
 * (rt_cli_text, cli/text.c). */
static void print_safe(const char *s, int width) { printf("%-*s", width, rt_cli_text(s)); }

static void print_table(json_t *files, const rt_history_rows *rows)
{
    printf("%-16s %-8s %s\n", "OUTCOME", "ATTEMPTS", "TEST");
    for (size_t i = 0; i < rows->ntests; i++) {
        const rt_history_test *t = &rows->tests[i];
        printf("%-16s %-8d ", t->status, t->attempts);
        print_safe(t->test, 0);
        if (t->message && *t->message) {
            fputs("\n                          ", stdout);
            print_safe(t->message, 0);
        }
        putchar('\n');
    }
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f)
    {
        const char *error = json_string_value(json_object_get(f, "error"));
        printf("%s: %lld testcases, %lld set aside%s",
               json_string_value(json_object_get(f, "file")),
               (long long)json_integer_value(json_object_get(f, "testcases")),
               (long long)json_integer_value(json_object_get(f, "set_aside")),
               error ? ", refused: " : "\n");
        if (error) {
            print_safe(error, 0);
            putchar('\n');
        }
        size_t j;
        json_t *reason;
        json_array_foreach(json_object_get(f, "aside"), j, reason)
        {
            fputs("  set aside: ", stdout);
            print_safe(json_string_value(reason), 0);
            putchar('\n');
        }
    }
}

/* One file into rows (its stats into files); false when it was refused. */
static bool read_one(const char *path, rt_history_rows *rows, json_t *files)
{
    size_t len = 0;
    rt_junit_stats stats = {0};
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = RT_EINVAL;
    char *data = rt__cli_read_file(path, (size_t)RT_JUNIT_MAX_BYTES, &len, "the JUnit file");
    if (data) {
        /* a refused file adds nothing: it is read into rows of its own first */
        rt_history_rows mine = {.hash_key = rows->hash_key};
        rc = rt_junit_add(data, len, &mine, &stats, errstr);
        rt_history_rows_free(&mine);
        if (rc == RT_OK) rc = rt_junit_add(data, len, rows, &(rt_junit_stats){0}, errstr);
    } else {
        snprintf(errstr, RT_ERRSTR_SIZE, "cannot read the file");
    }
    free(data);
    json_t *aside = json_array();
    for (size_t i = 0; i < stats.set_aside && i < RT_JUNIT_ASIDE_REASONS; i++)
        json_array_append_new(aside, json_string(stats.aside[i]));
    json_array_append_new(files, json_pack("{s:s, s:I, s:I, s:o, s:s?}", "file", path, "testcases",
                                           (json_int_t)stats.testcases, "set_aside",
                                           (json_int_t)stats.set_aside, "aside", aside, "error",
                                           rc == RT_OK       ? NULL
                                           : rc == RT_ENOMEM ? "out of memory"
                                                             : errstr));
    return rc == RT_OK;
}

int rt_cli_junit(int argc, char **argv, rt_config *cfg)
{
    (void)cfg;
    /* options anywhere among the files (getopt would stop at the first file here) */
    bool json = !isatty(STDOUT_FILENO);
    char **paths = calloc((size_t)argc, sizeof *paths);
    int npaths = 0;
    if (!paths) return 1;
    for (int i = 1; i < argc; i++) {
        const char *format = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            free(paths);
            return 0;
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            format = argv[++i];
        } else if (!strncmp(argv[i], "--format=", 9)) {
            format = argv[i] + 9;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            format = ""; /* an unknown option */
        } else {
            paths[npaths++] = argv[i];
            continue;
        }
        if (strcmp(format, "json") != 0 && strcmp(format, "table") != 0) {
            usage(stderr);
            free(paths);
            return 2;
        }
        json = !strcmp(format, "json");
    }
    if (npaths == 0) {
        usage(stderr);
        free(paths);
        return 2;
    }
    int status = 0;
    rt_history_rows rows = {.hash_key = *rt_hash_key()}; /* names come from the files */
    json_t *files = json_array(), *tests = json_array();
    for (int i = 0; i < npaths; i++)
        if (!read_one(paths[i], &rows, files)) status = 1;
    if (json) {
        for (size_t i = 0; i < rows.ntests; i++) {
            const rt_history_test *t = &rows.tests[i];
            json_array_append_new(tests, json_pack("{s:s, s:s, s:s, s:b, s:i, s:s?}", "test",
                                                   t->test, "group", t->group, "outcome", t->status,
                                                   "failed", t->failed, "attempts", t->attempts,
                                                   "message", t->message));
        }
        json_t *out = json_pack("{s:O, s:O}", "files", files, "tests", tests);
        char *text = out ? json_dumps(out, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        if (text)
            puts(text);
        else
            status = 1;
        free(text);
        json_decref(out);
    } else {
        print_table(files, &rows);
    }
    json_decref(files);
    json_decref(tests);
    rt_history_rows_free(&rows);
    free(paths);
    return status;
}
