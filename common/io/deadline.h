/* SPDX-License-Identifier: MPL-2.0 */
/* deadline.h - a time budget for work the core does on untrusted input (parsing a run's
 * errorsummary artifacts): the core has no clock, so it is given rt_deadline_expired with
 * a deadline to ask. Monotonic clock. Thread-safe per deadline. */
#ifndef RETRIG_COMMON_IO_DEADLINE_H
#define RETRIG_COMMON_IO_DEADLINE_H

#include "common/not_core.h"

#include <stdbool.h>

typedef struct rt_deadline {
    double at; /* monotonic seconds */
} rt_deadline;

/* A deadline budget_ms from now. */
void rt_deadline_start(rt_deadline *deadline, long budget_ms);
/* Whether the deadline (an rt_deadline *) has passed; the shape core callbacks take. */
bool rt_deadline_expired(void *deadline);

#endif
