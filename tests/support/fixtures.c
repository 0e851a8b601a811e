/* SPDX-License-Identifier: MPL-2.0 */
/* fixtures.c - failed variants of recorded task-completed messages. */
#include "support/fixtures.h"

#include <jansson.h>
#include <stdlib.h>

#include "support/util.h"

char *rt_test_failed_variant(const char *fixture_name, int unwrap)
{
    json_error_t error;
    json_t *root = json_load_file(rt_test_fixture(fixture_name), 0, &error);
    if (!root) fail_msg("cannot load %s: %s", fixture_name, error.text);
    json_t *body = json_object_get(root, "payload");
    if (body) {
        json_object_set_new(root, "exchange",
                            json_string("exchange/taskcluster-queue/v1/task-failed"));
    } else {
        body = root;
    }
    json_t *status = json_object_get(body, "status");
    json_object_set_new(status, "state", json_string("failed"));
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(status, "runs"), i, run)
    {
        json_object_set_new(run, "state", json_string("failed"));
        json_object_set_new(run, "reasonResolved", json_string("failed"));
    }
    char *text = json_dumps(unwrap ? body : root, JSON_COMPACT);
    json_decref(root);
    assert_non_null(text);
    return text;
}
