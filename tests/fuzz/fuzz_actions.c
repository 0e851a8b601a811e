/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_actions.c - libFuzzer target for actions.json parsing, action choice and rendering
 * (common/core/actions.h). */
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
    static const char *const names[] = {"retrigger-multiple", "retrigger", "backfill"};
    json_t *input = json_pack("{s:i}", "times", 2);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const rt_action *action = NULL;
        if (rt_actions_find(actions, names[i], tags, 2, &action, errstr) != RT_OK) continue;
        json_t *payload = NULL;
        if (rt_actions_render(actions, action, "f7Jj_h6MTEKr5Ln_7aFqbw", "GWxTc8p_RUa5_Xo4RtMiCA",
                              input, &payload, errstr) == RT_OK)
            json_decref(payload);
    }
    for (size_t i = 0; i < actions->count; i++)
        (void)rt_action_matches_tags(&actions->actions[i], tags, 2);
    json_decref(input);
    rt_actions_free(actions);
    return 0;
}
