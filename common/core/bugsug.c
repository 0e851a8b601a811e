/* SPDX-License-Identifier: MPL-2.0 */
/* bugsug.c - Treeherder bug_suggestions response -> one run's normalised failure lines. */
#include "common/core/bugsug.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define STB_MARK "| single tracking bug"

void rt_bugsug_free(rt_bugsug *bs)
{
    if (!bs) return;
    for (size_t i = 0; i < bs->nlines; i++) rt_failure_line_free(&bs->lines[i]);
    for (size_t i = 0; i < bs->ntracked; i++) rt_failure_line_free(&bs->tracked[i].line);
    free(bs->lines);
    free(bs->tracked);
    memset(bs, 0, sizeof *bs);
}

/* Does the summary's word w name the test path p: equal, or a suffix of it at a '/' that
 * itself contains a '/'? A word without a "?query" names the path without its query. */
static bool names_path(const char *w, size_t wl, const char *p, size_t pl)
{
    if (wl == 0) return false;
    size_t query = strcspn(p, "?");
    if (query < pl && !memchr(w, '?', wl)) pl = query;
    if (wl == pl && !memcmp(w, p, wl)) return true;
    if (!memchr(w, '/', wl) || wl >= pl) return false;
    const char *tail = p + pl - wl;
    return !memcmp(tail, w, wl) && (w[0] == '/' || tail[-1] == '/');
}

bool rt_bugsug_is_single_tracking_bug(const char *summary, const char *status,
                                      const char *resolution, const char *test)
{
    if (!summary || !test || !test[0]) return false;
    if (resolution && resolution[0]) return false;
    if (status && (!strcasecmp(status, "RESOLVED") || !strcasecmp(status, "VERIFIED") ||
                   !strcasecmp(status, "CLOSED")))
        return false;
    size_t n = strlen(summary), mark = strlen(STB_MARK);
    while (n > 0 && (summary[n - 1] == ' ' || summary[n - 1] == '\t')) n--;
    if (n < mark || strncasecmp(summary + n - mark, STB_MARK, mark) != 0) return false;
    /* The tracked test: the last word before " | single tracking bug". */
    size_t end = n - mark;
    while (end > 0 && summary[end - 1] == ' ') end--;
    size_t start = end;
    while (start > 0 && summary[start - 1] != ' ') start--;
    if (end == start) return false;
    /* A reftest pair, "a.html == a-ref.html": the bug filer names both halves. */
    const char *op = strstr(test, " == ");
    if (!op) op = strstr(test, " != ");
    if (!op) return names_path(summary + start, end - start, test, strlen(test));
    if (start < 5 || summary[start - 1] != ' ' || memcmp(summary + start - 3, op + 1, 2) != 0 ||
        summary[start - 4] != ' ')
        return false;
    size_t first_end = start - 4, first = first_end;
    while (first > 0 && summary[first - 1] != ' ') first--;
    return names_path(summary + first, first_end - first, test, (size_t)(op - test)) &&
           names_path(summary + start, end - start, op + 4, strlen(op + 4));
}

/* A string, null or absent: true; anything else: false. */
static bool optional_string(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return !v || json_is_null(v) || json_is_string(v);
}

/* Validates the bugs of one entry and finds an open single tracking bug for test. */
static int check_bugs(json_t *entry, size_t index, const char *test, long *stb_id, char *errstr)
{
    static const char *const lists[] = {"open_recent", "all_others", NULL};
    json_t *bugs = json_object_get(entry, "bugs");
    if (!bugs || json_is_null(bugs)) return RT_OK;
    if (!json_is_object(bugs)) {
        rt_set_errstr(errstr, "entry %zu: bugs is not an object", index);
        return RT_EPROTO;
    }
    for (const char *const *list = lists; *list; list++) {
        json_t *array = json_object_get(bugs, *list);
        if (!array || json_is_null(array)) continue;
        if (!json_is_array(array)) {
            rt_set_errstr(errstr, "entry %zu: bugs.%s is not an array", index, *list);
            return RT_EPROTO;
        }
        size_t k;
        json_t *bug;
        json_array_foreach(array, k, bug)
        {
            json_t *id = json_object_get(bug, "id");
            if (!json_is_object(bug) || !optional_string(bug, "summary") ||
                !optional_string(bug, "status") || !optional_string(bug, "resolution") ||
                !optional_string(bug, "keywords") ||
                (id && !json_is_null(id) && !json_is_integer(id))) {
                rt_set_errstr(errstr,
                              "entry %zu: bugs.%s[%zu] is not a bug object (id, summary, "
                              "status, resolution, keywords)",
                              index, *list, k);
                return RT_EPROTO;
            }
            if (*stb_id == 0 && test &&
                rt_bugsug_is_single_tracking_bug(
                    json_string_value(json_object_get(bug, "summary")),
                    json_string_value(json_object_get(bug, "status")),
                    json_string_value(json_object_get(bug, "resolution")), test))
                *stb_id = json_is_integer(id) ? (long)json_integer_value(id) : -1;
        }
    }
    return RT_OK;
}

static int check_entry_fields(json_t *entry, size_t index, char *errstr)
{
    json_t *v;
    if (!json_is_object(entry)) {
        rt_set_errstr(errstr, "entry %zu is not an object", index);
        return RT_EPROTO;
    }
    if (!json_is_string(json_object_get(entry, "search"))) {
        rt_set_errstr(errstr, "entry %zu: search is missing or not a string", index);
        return RT_EPROTO;
    }
    if (!optional_string(entry, "path_end")) {
        rt_set_errstr(errstr, "entry %zu: path_end is not a string", index);
        return RT_EPROTO;
    }
    v = json_object_get(entry, "search_terms");
    if (v && !json_is_null(v) && !json_is_array(v)) {
        rt_set_errstr(errstr, "entry %zu: search_terms is not an array", index);
        return RT_EPROTO;
    }
    v = json_object_get(entry, "line_number");
    if (v && !json_is_null(v) && !json_is_integer(v)) {
        rt_set_errstr(errstr, "entry %zu: line_number is not an integer", index);
        return RT_EPROTO;
    }
    v = json_object_get(entry, "counter");
    if (v && !json_is_null(v) && !json_is_integer(v)) {
        rt_set_errstr(errstr, "entry %zu: counter is not an integer", index);
        return RT_EPROTO;
    }
    v = json_object_get(entry, "failure_new_in_rev");
    if (v && !json_is_null(v) && !json_is_boolean(v)) {
        rt_set_errstr(errstr, "entry %zu: failure_new_in_rev is not a boolean", index);
        return RT_EPROTO;
    }
    return RT_OK;
}

static bool seen(const rt_failure_line *line, const rt_bugsug *bs)
{
    for (size_t i = 0; i < bs->nlines; i++)
        if (rt_failure_line_equal(line, &bs->lines[i])) return true;
    return false;
}

long rt_bugsug_tracking_bug(const rt_bugsug *bs, const rt_failure_line *line)
{
    for (size_t i = 0; i < bs->ntracked; i++)
        if (rt_failure_line_equal(line, &bs->tracked[i].line)) return bs->tracked[i].bug_id;
    return 0;
}

int rt_bugsug_parse(const char *json, size_t len, const rt_bugsug_options *opts, rt_bugsug *out,
                    char *errstr)
{
    rt_bugsug_options defaults = {0};
    if (!opts) opts = &defaults;
    size_t max_lines = opts->max_lines && opts->max_lines < RT_BUGSUG_MAX_LINES
                           ? opts->max_lines
                           : RT_BUGSUG_MAX_LINES;
    size_t max_bytes = opts->max_bytes ? opts->max_bytes : (size_t)RT_BUGSUG_MAX_BYTES;
    int rc = RT_OK;
    json_t *root = NULL;
    rt_failure_line line = {0};
    memset(out, 0, sizeof *out);
    if (len > max_bytes) {
        rt_set_errstr(errstr, "bug_suggestions response of %zu bytes exceeds %zu", len, max_bytes);
        return RT_ETOOBIG;
    }
    json_error_t jerr;
    root = json_loadb(json, len, 0, &jerr);
    if (!root) {
        rt_set_errstr(errstr, "bug_suggestions is not JSON: %s (line %d)", jerr.text, jerr.line);
        return RT_EPROTO;
    }
    if (!json_is_array(root)) {
        rt_set_errstr(errstr, "bug_suggestions is not a JSON array");
        rc = RT_EPROTO;
        goto out;
    }
    if (json_array_size(root) > RT_BUGSUG_MAX_ENTRIES) {
        rt_set_errstr(errstr, "bug_suggestions has %zu entries, more than %d",
                      json_array_size(root), RT_BUGSUG_MAX_ENTRIES);
        rc = RT_ETOOBIG;
        goto out;
    }
    out->lines = calloc(max_lines, sizeof *out->lines);
    out->tracked = calloc(max_lines, sizeof *out->tracked);
    if (!out->lines || !out->tracked) {
        rc = RT_ENOMEM;
        goto out;
    }
    size_t index;
    json_t *entry;
    json_array_foreach(root, index, entry)
    {
        out->entries++;
        if ((rc = check_entry_fields(entry, index, errstr)) != RT_OK) goto out;
        json_t *search = json_object_get(entry, "search");
        rc = rt_failure_line_parse(json_string_value(search), json_string_length(search), &line);
        if (rc == RT_ENOTFOUND) {
            out->other_lines++;
            rc = RT_OK;
            long ignored = 0;
            if ((rc = check_bugs(entry, index, NULL, &ignored, errstr)) != RT_OK) goto out;
            continue;
        }
        if (rc != RT_OK) goto out;
        long stb = 0;
        if ((rc = check_bugs(entry, index, line.test, &stb, errstr)) != RT_OK) goto out;
        if (seen(&line, out)) {
            out->duplicates++;
            rt_failure_line_free(&line);
        } else if (out->nlines < max_lines) {
            if (stb != 0) {
                /* Context: the line stays a failure line like any other. */
                rt_bugsug_tracked *t = &out->tracked[out->ntracked];
                if ((rc = rt_failure_line_copy(&t->line, &line)) != RT_OK) goto out;
                t->bug_id = stb;
                out->ntracked++;
            }
            out->lines[out->nlines++] = line; /* ownership moves */
            memset(&line, 0, sizeof line);
        } else {
            out->truncated++;
            rt_failure_line_free(&line);
        }
    }
out:
    rt_failure_line_free(&line);
    json_decref(root);
    if (rc != RT_OK) rt_bugsug_free(out);
    return rc;
}
