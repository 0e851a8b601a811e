/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_actions.c - libFuzzer target for actions.json parsing, action choice, rendering and
 * the check that the rendered payload is the call asked for (common/core/actions.h). */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/core/actions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt_actions *actions = NULL;
    char errstr[RT_ERRSTR_SIZE];
    if (rt_actions_parse((const char *)data, size, 1024 * 1024, &actions, errstr) != RT_OK)
        return 0;
    static const rt_tag tags[] = {{"kind", "test"}, {"retrigger", "true"}};
    static const char *const names[] = {"retrigger-multiple", "retrigger", "backfill",
                                        "add-new-jobs"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const rt_action *action = NULL;
        if (rt_actions_find(actions, names[i], tags, 2, &action, errstr) != RT_OK) continue;
        json_t *input = rt_actions_input(names[i], "test-linux1804-64/opt-mochitest-1", 2, 9);
        json_t *payload = NULL;
        const char *code = NULL;
        if (input &&
            rt_actions_render(actions, action, "f7Jj_h6MTEKr5Ln_7aFqbw",
                              rt_action_is_task_group(action) ? NULL : "GWxTc8p_RUa5_Xo4RtMiCA",
                              input, &payload, errstr) == RT_OK)
            (void)rt_actions_check_payload(action->name, input, payload, &code, errstr);
        json_decref(payload);
        json_decref(input);
    }
    for (size_t i = 0; i < actions->count; i++)
        (void)rt_action_matches_tags(&actions->actions[i], tags, 2);
    rt_actions_free(actions);
    return 0;
}
