/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_taskdef.c - libFuzzer target for task definition parsing (common/core/taskdef.h). */
#include <stddef.h>
#include <stdint.h>

#include "common/core/taskdef.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt_taskdef def;
    char reason[128];
    if (rt_taskdef_parse((const char *)data, size, 1024 * 1024, &def, reason) == RT_OK)
        rt_taskdef_free(&def);
    return 0;
}
