/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_perf_summaries.c - libFuzzer target for rt_perf_summaries_parse, the parser of
 * Perfherder's alert summary pages (untrusted JSON from the network). Each input is parsed
 * twice into the same list, as the worker does with successive pages, so the duplicate
 * check and the append path run too. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/core/perf_pick.h"
#include "common/io/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        rt_log_set_level(RT_LOG_ERROR);
        quiet = 1;
    }
    rt_perf_summaries summaries = {0};
    char errstr[RT_ERRSTR_SIZE];
    for (int pass = 0; pass < 2; pass++) {
        char *next = NULL;
        if (rt_perf_summaries_parse((const char *)data, size, &summaries, &next, errstr) != RT_OK)
            break;
        free(next);
    }
    rt_perf_summaries_free(&summaries);
    return 0;
}
