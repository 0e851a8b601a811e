/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_bugsug.c - libFuzzer target for the bug_suggestions parser and the verdict over what
 * it returns: no crash, no leak, and the parsed lines obey their invariants. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/bugsug.h"
#include "common/core/verdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char errstr[RT_ERRSTR_SIZE];
    for (int drop = 0; drop < 2; drop++) {
        rt_bugsug bs;
        rt_bugsug_options opts = {.drop_single_tracking = drop != 0};
        if (rt_bugsug_parse((const char *)data, size, &opts, &bs, errstr) != RT_OK) {
            if (bs.lines || bs.nlines) abort(); /* failure leaves nothing behind */
            continue;
        }
        if (bs.nlines > RT_BUGSUG_MAX_LINES || (!drop && bs.ntracked)) abort();
        for (size_t i = 0; i < bs.nlines; i++) {
            const rt_failure_line *l = &bs.lines[i];
            if (strncmp(l->signature, RT_FAILURE_LINE_PREFIX, strlen(RT_FAILURE_LINE_PREFIX)) ||
                l->hash != rt_failure_line_hash(l->signature, strlen(l->signature)))
                abort();
            for (size_t j = 0; j < i; j++)
                if (rt_failure_line_equal(l, &bs.lines[j])) abort(); /* kept once */
        }
        /* The run against itself as two failed retriggers and a pending one. */
        rt_verdict_run runs[3] = {
            {.state = RT_RUN_FAILED, .lines = bs.lines, .nlines = bs.nlines},
            {.state = RT_RUN_FAILED, .lines = bs.lines, .nlines = bs.nlines},
            {.state = RT_RUN_PENDING},
        };
        rt_verdict_input in = {.original = bs.lines,
                               .noriginal = bs.nlines,
                               .original_tracked = bs.ntracked,
                               .runs = runs,
                               .nruns = 3,
                               .threshold = 2};
        rt_verdict_result out;
        if (rt_verdict_decide(&in, &out) != RT_OK) abort();
        if (bs.nlines && out.verdict != RT_VERDICT_REGRESSION) abort();
        rt_bugsug_free(&bs);
    }
    return 0;
}
