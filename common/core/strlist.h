/* SPDX-License-Identifier: MPL-2.0 */
/* strlist.h - a short list of strings: the shape of every list-valued setting (tiers, pool
 * prefixes, budget limits, ...) as the core reads it. The configuration owns the strings
 * (common/config.h calls this type rt_config_list). */
#ifndef RETRIG_COMMON_CORE_STRLIST_H
#define RETRIG_COMMON_CORE_STRLIST_H

#include <stddef.h>

#define RT_STRLIST_MAX 16

typedef struct rt_strlist {
    size_t count;
    char *items[RT_STRLIST_MAX];
} rt_strlist;

#endif
