/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_culprit_window.c - libFuzzer target for rt_culprit_window_parse, the parser of the
 * window `retrig culprit --pushes` reads (untrusted JSON), and for the search over whatever
 * window it accepts: rt_culprit_next must answer every valid window with a result whose
 * range, probe and times are in bounds, under a solid, a flaky and a no-history model and any
 * budget; the target aborts otherwise. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/core/culprit.h"
#include "common/core/culprit_window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const rt_culprit_window *w, const rt_culprit_model *model, long jobs_left)
{
    rt_culprit_input in = {
        .pushes = w->pushes, .npushes = w->count, .model = *model, .jobs_left = jobs_left};
    rt_culprit_result res;
    if (rt_culprit_next(&in, &res) != RT_OK) abort();
    long last = (long)w->count - 1;
    if (res.first < 0 || res.first > res.last || res.last > last) abort();
    switch (res.status) {
    case RT_CULPRIT_FOUND:
        if (res.culprit != res.first || res.culprit != res.last || res.culprit < 1) abort();
        break;
    case RT_CULPRIT_BEFORE_WINDOW:
        if (res.culprit != 0 || res.last != 0) abort();
        break;
    case RT_CULPRIT_SEARCHING:
        if (res.probe < -1 || res.probe >= last) abort();
        if (res.probe >= 0 && (res.times < 1 || res.times > RT_CULPRIT_MAX_TIMES)) abort();
        if (res.probe >= 0 && res.times + (res.confirm >= 0 ? res.confirm_times : 0) > jobs_left)
            abort();
        if (res.confirm >= 0 && (res.confirm != 0 || res.probe != 1)) abort();
        break;
    case RT_CULPRIT_STOPPED:
        if (res.probe != -1) abort();
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rt_culprit_window w;
    char errstr[RT_ERRSTR_SIZE];
    if (rt_culprit_window_parse((const char *)data, size, &w, errstr) != RT_OK) return 0;
    const rt_culprit_push *failing = &w.pushes[w.count - 1];
    const rt_culprit_model models[] = {
        {.confidence = 0.95, .threshold = 2, .reproduction_rate = 1, .history_runs = 2000},
        {.confidence = 0.99,
         .threshold = 3,
         .reproduction_rate = rt_culprit_reproduction_rate(failing->runs, failing->reproduced),
         .history_runs = 40,
         .history_failures = 6},
        {.confidence = 0.5, .threshold = 1, .reproduction_rate = 0.05},
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        check(&w, &models[i], 120);
        check(&w, &models[i], (long)(size % 7));
    }
    return 0;
}
