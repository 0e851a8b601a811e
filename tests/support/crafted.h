/* SPDX-License-Identifier: MPL-2.0 */
/* crafted.h - errorsummary artifacts made to be expensive (issue 20: 13.9 MB took 35 s),
 * and a real one grown to the same size, for tests/unit/test_errorsummary_cost.c and
 * tests/bench/bench_errorsummary.c:
 *   long-names   test_groups lines of 2,048-byte group names that differ only at the end,
 *                up to the group cap, then look-ups of those names
 *   many-groups  RT_ES_MAX_GROUPS groups named by a 200-byte common prefix and a number,
 *                then group_result lines for them, round robin
 *   lookups      a few long groups, then test_result lines naming them again and again
 *   real         the recorded mochitest-browser-chrome errorsummary, repeated
 * Each returns a malloc'd text of about `bytes` bytes (*len set); fails the test on error. */
#ifndef RETRIG_TESTS_SUPPORT_CRAFTED_H
#define RETRIG_TESTS_SUPPORT_CRAFTED_H

#include <stddef.h>

typedef enum {
    RT_CRAFTED_REAL,
    RT_CRAFTED_LONG_NAMES,
    RT_CRAFTED_MANY_GROUPS,
    RT_CRAFTED_LOOKUPS,
} rt_crafted_kind;

const char *rt_crafted_name(rt_crafted_kind kind);
char *rt_crafted_errorsummary(rt_crafted_kind kind, size_t bytes, size_t *len);

#endif
