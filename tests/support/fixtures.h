/* SPDX-License-Identifier: MPL-2.0 */
/* fixtures.h - test data derived from the recorded fixtures, changing as little as
 * possible: a completed task message turned into a failed one. */
#ifndef RETRIG_TESTS_SUPPORT_FIXTURES_H
#define RETRIG_TESTS_SUPPORT_FIXTURES_H

#include <stddef.h>

/* Reads a Pulse fixture (raw body or Treeherder wrapper) and returns the same message with
 * only its state fields changed to "failed" (status.state, each run's state and
 * reasonResolved) and, in a wrapper, the exchange changed to task-failed. Returns the raw
 * body (unwrapped) when unwrap is non-zero. malloc'd JSON text; fails the test on error. */
char *rt_test_failed_variant(const char *fixture_name, int unwrap);

#endif
