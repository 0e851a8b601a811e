/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_junit.c - libFuzzer target for the JUnit XML reader (common/core/junit.h) and the
 * merging of its testcases into test history rows (common/core/history.h): one row per test,
 * a failing test fails its group, FLAKY is a failure and the outcomes of issue 31 that are
 * no test failure (DISABLED, COLLECTION_ERROR, BUILD_FAILED) never are. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/core/junit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt_history_rows rows;
    rt_junit_stats stats;
    memset(&rows, 0, sizeof rows);
    memset(&stats, 0, sizeof stats);
    char errstr[RT_ERRSTR_SIZE];
    if (rt_junit_add((const char *)data, size, &rows, &stats, errstr) == RT_OK) {
        /* Merged: one row per test, and every failing test fails its group. */
        for (size_t i = 0; i < rows.ntests; i++) {
            /* a flaky result is a failure; disabled, collection and build errors are not */
            const char *status = rows.tests[i].status;
            if (!strcmp(status, "FLAKY") && !rows.tests[i].failed) __builtin_trap();
            if ((!strcmp(status, "DISABLED") || !strcmp(status, "COLLECTION_ERROR") ||
                 !strcmp(status, "BUILD_FAILED")) &&
                rows.tests[i].failed)
                __builtin_trap();
            if (stats.set_aside > stats.testcases) __builtin_trap();
            if (!rows.tests[i].failed || !rows.tests[i].group[0]) continue;
            int found = 0;
            for (size_t g = 0; g < rows.ngroups; g++)
                if (!strcmp(rows.groups[g].name, rows.tests[i].group))
                    found = rows.groups[g].failed;
            if (!found) __builtin_trap();
        }
    }
    rt_history_rows_free(&rows);
    return 0;
}
