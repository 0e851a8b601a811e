/* SPDX-License-Identifier: MPL-2.0 */
/* endpoint.h - what tests ask a worker's /metrics and /healthz endpoint, and free ports.
 * Failures fail the current cmocka test. */
#ifndef RETRIG_TESTS_SUPPORT_ENDPOINT_H
#define RETRIG_TESTS_SUPPORT_ENDPOINT_H

/* A TCP port on 127.0.0.1 that was free a moment ago. */
int rt_test_free_port(void);
/* Sleeps ms milliseconds. */
void rt_test_pause_ms(long ms);
/* GET http://127.0.0.1:port/path; returns the status (0: no answer), *body malloc'd. */
long rt_test_get(int port, const char *path, char **body);
/* Polls /healthz until it answers want (bounded); returns the last body (malloc'd). */
char *rt_test_wait_health(int port, long want, int timeout_ms);
/* The value of the sample whose line starts with `series` ("name{labels}"), summed over
 * every matching line when series ends with '{'; 0 when absent. */
double rt_test_sample(int port, const char *series);
/* Polls rt_test_sample until it reaches want or timeout_ms passes; returns the last value. */
double rt_test_wait_sample(int port, const char *series, double want, int timeout_ms);

#endif
