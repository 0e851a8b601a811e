/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_pulse.c - libFuzzer target for Pulse task-* message parsing (common/core/pulse.h): each
 * input is parsed as coming from no known exchange, then from each queue exchange. */
#include <stddef.h>
#include <stdint.h>

#include "common/core/pulse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const exchanges[] = {
        NULL,
        "exchange/taskcluster-queue/v1/task-completed",
        "exchange/taskcluster-queue/v1/task-failed",
        "exchange/taskcluster-queue/v1/task-exception",
        "exchange/taskcluster-queue/v1/task-pending",
    };
    for (size_t i = 0; i < sizeof exchanges / sizeof exchanges[0]; i++) {
        rt_pulse_task task;
        char reason[RT_PULSE_REASON_SIZE];
        if (rt_pulse_parse((const char *)data, size, exchanges[i], 1024 * 1024, &task, reason) ==
            RT_OK) {
            (void)rt_pulse_apply_route(&task, "route.tc-treeherder.v2.try.abcdef123456.12");
            rt_pulse_task_free(&task);
        }
    }
    return 0;
}
