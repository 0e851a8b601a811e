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
    for (int small = 0; small < 2; small++) {
        rt_bugsug bs;
        rt_bugsug_options opts = {.max_lines = small ? 2 : 0};
        if (rt_bugsug_parse((const char *)data, size, &opts, &bs, errstr) != RT_OK) {
            if (bs.lines || bs.nlines) abort(); /* failure leaves nothing behind */
            continue;
        }
        if (bs.nlines > (small ? 2 : RT_BUGSUG_MAX_LINES) || bs.ntracked > bs.nlines) abort();
        bool tracked[RT_VERDICT_MAX_LINES] = {false};
        for (size_t i = 0; i < bs.nlines; i++) {
            const rt_failure_line *l = &bs.lines[i];
            if ((strncmp(l->signature, RT_FAILURE_LINE_PREFIX, strlen(RT_FAILURE_LINE_PREFIX)) &&
                 strncmp(l->signature, RT_FAILURE_LINE_CRASH, strlen(RT_FAILURE_LINE_CRASH))) ||
                l->hash != rt_failure_line_hash(l->signature, strlen(l->signature)))
                abort();
            for (size_t j = 0; j < i; j++)
                if (rt_failure_line_equal(l, &bs.lines[j])) abort(); /* kept once */
            tracked[i] = rt_bugsug_tracking_bug(&bs, l) != 0;
        }
        for (size_t t = 0; t < bs.ntracked; t++) { /* every tracked line is one of the lines */
            bool found = false;
            for (size_t i = 0; i < bs.nlines && !found; i++)
                found = rt_failure_line_equal(&bs.tracked[t].line, &bs.lines[i]);
            if (!found) abort();
        }
        /* The run against itself as two failed retriggers and a pending one. */
        rt_verdict_run runs[3] = {
            {.state = RT_RUN_FAILED, .lines = bs.lines, .nlines = bs.nlines},
            {.state = RT_RUN_FAILED, .lines = bs.lines, .nlines = bs.nlines},
            {.state = RT_RUN_PENDING},
        };
        rt_verdict_input in = {.original = bs.lines,
                               .noriginal = bs.nlines,
                               .original_tracked = tracked,
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
