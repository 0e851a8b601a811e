/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_artifact_zip.c - libFuzzer target for the bounded zip reader (common/io/artifact_zip.h)
 * with the JUnit reader behind it, as collect-github reads an artifact. Invariants: no file
 * given is over the per-file cap, and the bytes given stay within the total cap. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/core/junit.h"
#include "common/io/artifact_zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FILE_CAP  (256 * 1024)
#define TOTAL_CAP (1024 * 1024)

static size_t given;

static int on_file(void *ctx, const char *name, const char *text, size_t len, int rc)
{
    (void)ctx;
    (void)name;
    if (rc != RT_OK) return RT_OK;
    if (len > FILE_CAP || text[len] != '\0') __builtin_trap();
    given += len;
    rt_history_rows rows;
    rt_junit_stats stats;
    memset(&rows, 0, sizeof rows);
    memset(&stats, 0, sizeof stats);
    char errstr[RT_ERRSTR_SIZE];
    (void)rt_junit_add(text, len, &rows, &stats, errstr);
    rt_history_rows_free(&rows);
    return RT_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt_zip_limits limits = {64, FILE_CAP, TOTAL_CAP};
    rt_zip_stats stats;
    char errstr[RT_ERRSTR_SIZE];
    given = 0;
    (void)rt_zip_each(data, size, &limits, "*", on_file, NULL, &stats, errstr);
    if (given > TOTAL_CAP) __builtin_trap();
    return 0;
}
