/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_failure_line.c - libFuzzer target for the failure line normaliser: no crash, no
 * leak, message normalisation is idempotent, the signature is made of the parts, parses back
 * to itself and gives the same failure behind a harness label. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/failure_line.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    rt_failure_line line;
    int rc = rt_failure_line_parse(text, size, &line);
    if (rc == RT_OK) {
        /* a TEST-UNEXPECTED-* status, or a crash (PROCESS-CRASH lines are failure lines) */
        if ((strncmp(line.status, RT_FAILURE_LINE_PREFIX, strlen(RT_FAILURE_LINE_PREFIX)) &&
             strcmp(line.status, RT_FAILURE_LINE_CRASH)) ||
            strncmp(line.signature, line.status, strlen(line.status)) ||
            line.hash != rt_failure_line_hash(line.signature, strlen(line.signature)) ||
            strlen(line.hash_hex) != 16)
            abort();
        /* Parsing the signature again gives the same failure. */
        rt_failure_line again;
        if (rt_failure_line_parse(line.signature, strlen(line.signature), &again) != RT_OK) abort();
        if (!rt_failure_line_equal(&line, &again)) abort();
        rt_failure_line_free(&again);
        /* A harness label before the status ("596 INFO ", "REFTEST ") is not part of the
         * failure (when the label does not push the line past the length a parse reads). */
        static const char label[] = "596 INFO ";
        size_t labelled_len = sizeof label - 1 + strlen(line.signature);
        if (labelled_len <= RT_FAILURE_LINE_MAX_INPUT) {
            char *labelled = malloc(labelled_len + 1);
            if (!labelled) abort();
            memcpy(labelled, label, sizeof label - 1);
            memcpy(labelled + sizeof label - 1, line.signature, strlen(line.signature) + 1);
            if (rt_failure_line_parse(labelled, labelled_len, &again) != RT_OK) abort();
            if (!rt_failure_line_equal(&line, &again)) abort();
            rt_failure_line_free(&again);
            free(labelled);
        }
        rt_failure_line_free(&line);
    } else if (rc != RT_ENOTFOUND) {
        abort();
    }
    char *once = rt_failure_line_normalise_message(text, size);
    if (!once) abort();
    char *twice = rt_failure_line_normalise_message(once, strlen(once));
    if (!twice || strcmp(once, twice) != 0) abort();
    free(once);
    free(twice);
    return 0;
}
