/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_errorsummary.c - libFuzzer target for errorsummary parsing and classification
 * (common/core/errorsummary.h). A NUL byte splits the input into several artifacts of one run. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/core/errorsummary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt_errorsummary es;
    memset(&es, 0, sizeof es);
    const char *text = (const char *)data;
    size_t left = size;
    while (left > 0) {
        const char *nul = memchr(text, '\0', left);
        size_t len = nul ? (size_t)(nul - text) : left;
        if (rt_errorsummary_add(&es, text, len) != RT_OK) break;
        text += len + (nul ? 1 : 0);
        left -= len + (nul ? 1 : 0);
    }
    const char *reason = NULL;
    (void)rt_errorsummary_classify(&es, &reason);
    (void)rt_errorsummary_complete(&es);
    for (size_t i = 0; i < es.ngroups; i++) (void)rt_errorsummary_group_failed(&es, &es.groups[i]);
    rt_errorsummary_free(&es);
    return 0;
}
