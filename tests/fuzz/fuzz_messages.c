/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_messages.c - libFuzzer target for our own queue messages (common/core/messages.h,
 * events.h): each input is parsed as a retrigger request, a decide request, a decision event
 * and a culprit event; a message that parses is built back, must parse again and build to the
 * same text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/events.h"
#include "common/core/messages.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A text built from a parsed message must parse and build to itself. */
#define ROUND_TRIP(type, parse, build, release)                                                    \
    do {                                                                                           \
        type m;                                                                                    \
        if (parse((const char *)data, size, &m, reason) == RT_OK) {                                \
            char *text = build(&m);                                                                \
            if (text) {                                                                            \
                type again;                                                                        \
                if (parse(text, strlen(text), &again, reason) != RT_OK) abort();                   \
                char *second = build(&again);                                                      \
                if (!second || strcmp(second, text) != 0) abort();                                 \
                free(second);                                                                      \
                release(&again);                                                                   \
                free(text);                                                                        \
            }                                                                                      \
        }                                                                                          \
        release(&m);                                                                               \
    } while (0)

static void no_free(rt_decide_request *r) { (void)r; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char reason[RT_MESSAGE_REASON_SIZE];
    ROUND_TRIP(rt_retrigger_request, rt_retrigger_request_parse, rt_retrigger_request_build,
               rt_retrigger_request_free);
    ROUND_TRIP(rt_decide_request, rt_decide_request_parse, rt_decide_request_build, no_free);
    ROUND_TRIP(rt_decision_event, rt_decision_event_parse, rt_decision_event_build,
               rt_decision_event_free);
    ROUND_TRIP(rt_culprit_event, rt_culprit_event_parse, rt_culprit_event_build,
               rt_culprit_event_free);
    return 0;
}
