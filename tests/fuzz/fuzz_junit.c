/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_junit.c - libFuzzer target for the JUnit XML reader (common/core/junit.h) and the
 * merging of its testcases into test history rows (common/core/history.h). */
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
