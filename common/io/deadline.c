/* SPDX-License-Identifier: MPL-2.0 */
/* deadline.c - time budgets on the monotonic clock. */
#include "common/io/deadline.h"

#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rt_deadline_start(rt_deadline *deadline, long budget_ms)
{
    deadline->at = now_seconds() + (double)budget_ms / 1000.0;
}

bool rt_deadline_expired(void *deadline)
{
    return now_seconds() >= ((const rt_deadline *)deadline)->at;
}
