/* SPDX-License-Identifier: MPL-2.0 */
/* stop.h - the process's stop request, and waits that end when it comes.
 *
 * The first SIGTERM or SIGINT (rt_stop_install) asks the process to stop: the flag is a C11
 * atomic, so lane threads read it safely, and an eventfd becomes readable for code that polls.
 * A second signal exits at once (128 + signal). Every wait of the library (reconnect backoff
 * of AMQP, Redis and Postgres, HTTP retry pauses, the workers' pauses) sleeps through
 * rt_stop_sleep_ms, which returns as soon as a stop is asked for, so a stopping worker never
 * sleeps through SIGTERM. Work in hand may finish until the drain deadline
 * (rt_stop_draining_over): an HTTP transfer still running after it is cut.
 * Thread-safe; rt_stop_request is async-signal-safe. */
#ifndef RETRIG_COMMON_STOP_H
#define RETRIG_COMMON_STOP_H

#include "common/not_core.h"

#include <stdbool.h>

/* SIGTERM and SIGINT ask for a stop (a second one exits at once); drain_ms: how long work in
 * hand may go on after the request (0: 10000). */
void rt_stop_install(long drain_ms);
/* Asks for a stop, as the first SIGTERM does. */
void rt_stop_request(void);
/* Whether a stop was asked for. */
bool rt_stop_requested(void);
/* A stop was asked for and the drain time since has passed: what is still running is cut. */
bool rt_stop_draining_over(void);
/* A file descriptor that becomes readable once a stop is asked for (-1 if none could be
 * made: then poll in slices and check rt_stop_requested). */
int rt_stop_fd(void);
/* Sleeps ms milliseconds, or until a stop is asked for. Returns false when it woke (or
 * found) a stop request, true after a full sleep. */
bool rt_stop_sleep_ms(long ms);

#endif
