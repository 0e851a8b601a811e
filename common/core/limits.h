/* SPDX-License-Identifier: MPL-2.0 */
/* limits.h - the budget policy: a platform's daily limit from "pattern=limit" items
 * ("android*=100, *=600"; fnmatch globs, first match wins). Pure; the claims against these
 * limits are common/io/budget.h. */
#ifndef RETRIG_COMMON_CORE_LIMITS_H
#define RETRIG_COMMON_CORE_LIMITS_H

#include "common/core/errors.h"
#include "common/core/strlist.h"

/* The daily limit of a platform from "pattern=limit" items (fnmatch globs, first match);
 * fallback when none matches. Returns RT_EINVAL for a malformed item (config checks this). */
RT_MUSTCHECK int rt_budget_limit_for(const rt_strlist *limits, const char *platform, int fallback,
                                     int *limit);
/* Checks "pattern=limit" items; errstr names the bad item. */
RT_MUSTCHECK int rt_budget_check_limits(const rt_strlist *limits, char *errstr);

#endif
