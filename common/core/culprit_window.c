/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_window.c - the JSON window of `retrig culprit --pushes` into a validated struct
 * (culprit_window.h). */
#include "common/core/culprit_window.h"

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

bool rt_culprit_valid_revision(const char *s)
{
    size_t n = 0;
    for (; s && s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))) return false;
    return s && (n == 12 || n == 40);
}

/* An integer member in min..max; absent gives fallback when fallback >= 0. */
static int count_member(json_t *push, size_t index, const char *key, long min, long max,
                        long fallback, int *out, char *errstr)
{
    json_t *v = json_object_get(push, key);
    if (!v && fallback >= 0) {
        *out = (int)fallback;
        return RT_OK;
    }
    if (!v) {
        rt_set_errstr(errstr, "push %zu: \"%s\" is missing", index, key);
        return RT_EPROTO;
    }
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        rt_set_errstr(errstr, "push %zu: \"%s\" must be an integer from %ld to %ld", index, key,
                      min, max);
        return RT_EPROTO;
    }
    *out = (int)json_integer_value(v);
    return RT_OK;
}

static int parse_push(json_t *push, size_t index, rt_culprit_window *out, char *errstr)
{
    if (!json_is_object(push)) {
        rt_set_errstr(
            errstr, "push %zu: expected an object {\"revision\", \"runs\", \"reproduced\"}", index);
        return RT_EPROTO;
    }
    const char *key;
    json_t *value;
    json_object_foreach(push, key, value)
    {
        if (strcmp(key, "revision") && strcmp(key, "runs") && strcmp(key, "reproduced") &&
            strcmp(key, "pending")) {
            rt_set_errstr(errstr, "push %zu: unknown member \"%.40s\"", index, key);
            return RT_EPROTO;
        }
    }
    json_t *revision = json_object_get(push, "revision");
    if (!json_is_string(revision) || !rt_culprit_valid_revision(json_string_value(revision))) {
        rt_set_errstr(errstr, "push %zu: \"revision\" must be 12 or 40 lowercase hex digits",
                      index);
        return RT_EPROTO;
    }
    const char *rev = json_string_value(revision);
    for (size_t i = 0; i < index; i++) {
        const char *other = out->revisions[i];
        size_t shorter = strlen(rev) < strlen(other) ? strlen(rev) : strlen(other);
        if (!strncmp(rev, other, shorter)) {
            rt_set_errstr(errstr, "push %zu: revision %s is also push %zu", index, rev, i);
            return RT_EPROTO;
        }
    }
    memcpy(out->revisions[index], rev, strlen(rev) + 1);
    rt_culprit_push *p = &out->pushes[index];
    int rc;
    if ((rc = count_member(push, index, "runs", 0, RT_CULPRIT_MAX_RUNS, -1, &p->runs, errstr)) ||
        (rc = count_member(push, index, "reproduced", 0, p->runs, -1, &p->reproduced, errstr)) ||
        (rc = count_member(push, index, "pending", 0, RT_CULPRIT_MAX_RUNS, 0, &p->pending, errstr)))
        return rc;
    return RT_OK;
}

int rt_culprit_window_parse(const char *text, size_t len, rt_culprit_window *out, char *errstr)
{
    memset(out, 0, sizeof *out);
    if (len > (size_t)RT_CULPRIT_WINDOW_MAX_BYTES) {
        rt_set_errstr(errstr, "the window is larger than %ld bytes", RT_CULPRIT_WINDOW_MAX_BYTES);
        return RT_ETOOBIG;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    int rc = RT_EPROTO;
    if (!root) {
        rt_set_errstr(errstr, "not JSON: %s (line %d, column %d)", jerr.text, jerr.line,
                      jerr.column);
        return RT_EPROTO;
    }
    if (!json_is_array(root)) {
        rt_set_errstr(errstr, "expected an array of pushes, oldest first");
        goto out;
    }
    size_t count = json_array_size(root);
    if (count > RT_CULPRIT_MAX_PUSHES) {
        rt_set_errstr(errstr, "%zu pushes: at most %d (the first, up to %d between, the failing)",
                      count, RT_CULPRIT_MAX_PUSHES, RT_CULPRIT_MAX_PUSHES - 2);
        rc = RT_ETOOBIG;
        goto out;
    }
    if (count < 2) {
        rt_set_errstr(errstr,
                      "%zu pushes: the window needs at least the first push (known good) "
                      "and the failing push",
                      count);
        goto out;
    }
    for (size_t i = 0; i < count; i++)
        if ((rc = parse_push(json_array_get(root, i), i, out, errstr)) != RT_OK) goto out;
    if (out->pushes[count - 1].reproduced < 1) {
        rt_set_errstr(errstr,
                      "push %zu: the failing push (the last) must have reproduced the "
                      "failure line at least once",
                      count - 1);
        rc = RT_EPROTO;
        goto out;
    }
    out->count = count;
    rc = RT_OK;
out:
    json_decref(root);
    if (rc != RT_OK) memset(out, 0, sizeof *out);
    return rc;
}
