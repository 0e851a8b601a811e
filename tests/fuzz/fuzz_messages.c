/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_messages.c - libFuzzer target for our own queue messages (common/core/messages.h): each
 * input is parsed as a retrigger request and as a decide request; a decide request that parses is
 * built back and must parse again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/messages.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char reason[RT_MESSAGE_REASON_SIZE];
    rt_retrigger_request rr;
    if (rt_retrigger_request_parse((const char *)data, size, &rr, reason) == RT_OK)
        rt_retrigger_request_free(&rr);

    rt_decide_request dr;
    if (rt_decide_request_parse((const char *)data, size, &dr, reason) == RT_OK) {
        char *text = rt_decide_request_build(&dr);
        if (text) {
            rt_decide_request again;
            if (rt_decide_request_parse(text, strlen(text), &again, reason) != RT_OK) abort();
            if (again.set_id != dr.set_id || again.attempt != dr.attempt ||
                strcmp(again.project, dr.project) != 0 || strcmp(again.reason, dr.reason) != 0)
                abort();
            free(text);
        }
    }
    return 0;
}
