/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_jscan.c - differential libFuzzer target for the JSON scanner (common/core/jscan.h): on
 * every input it must accept exactly what jansson accepts and give the same tree; any
 * difference aborts. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/jscan_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int d = rt_jscan_diff((const char *)data, size);
    if (d) {
        fprintf(stderr, "jscan and jansson disagree (%s)\n",
                d == 1 ? "acceptance" : "decoded tree");
        abort();
    }
    return 0;
}
