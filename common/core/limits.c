/* SPDX-License-Identifier: MPL-2.0 */
/* limits.c - daily limits per platform from PATTERN=LIMIT glob items. */
#include "common/core/limits.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_item(const char *item, char *pattern, size_t size, int *limit)
{
    const char *eq = strrchr(item, '=');
    if (!eq || eq == item || (size_t)(eq - item) >= size) return RT_EINVAL;
    char *end = NULL;
    long v = strtol(eq + 1, &end, 10);
    if (end == eq + 1 || *end || v < 0 || v > 1000000) return RT_EINVAL;
    memcpy(pattern, item, (size_t)(eq - item));
    pattern[eq - item] = '\0';
    while (pattern[0] && pattern[strlen(pattern) - 1] == ' ') pattern[strlen(pattern) - 1] = '\0';
    *limit = (int)v;
    return RT_OK;
}

int rt_budget_check_limits(const rt_strlist *limits, char *errstr)
{
    for (size_t i = 0; i < limits->count; i++) {
        char pattern[256];
        int limit;
        if (parse_item(limits->items[i], pattern, sizeof pattern, &limit) != RT_OK) {
            rt_set_errstr(errstr, "bad value for 'budget_limits': '%s' is not PATTERN=LIMIT",
                          limits->items[i]);
            return RT_ECONFIG;
        }
    }
    return RT_OK;
}

int rt_budget_limit_for(const rt_strlist *limits, const char *platform, int fallback, int *limit)
{
    for (size_t i = 0; i < limits->count; i++) {
        char pattern[256];
        int value;
        if (parse_item(limits->items[i], pattern, sizeof pattern, &value) != RT_OK)
            return RT_EINVAL;
        if (fnmatch(pattern, platform, 0) == 0) {
            *limit = value;
            return RT_OK;
        }
    }
    *limit = fallback;
    return RT_OK;
}
