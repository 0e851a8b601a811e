/* SPDX-License-Identifier: MPL-2.0 */
/* jscan_diff.h - compares common/core/jscan.h with jansson on one input, for the unit test and
 * the differential fuzz target: both must accept exactly the same documents, and for an
 * accepted one yield the same tree (types, decoded strings, integers, members, elements).
 * Header-only so that the fuzz target needs no test library. */
#ifndef RETRIG_TESTS_SUPPORT_JSCAN_DIFF_H
#define RETRIG_TESTS_SUPPORT_JSCAN_DIFF_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/jscan.h"

/* True when jansson value v and token i of js are the same value. */
static inline bool rt_jscan_diff_same(json_t *v, const rt_jscan *js, int i)
{
    rt_js_type t = rt_js_type_of(js, i);
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (t != RT_JS_OBJECT || json_object_size(v) != js->tok[i].count) return false;
        const char *key;
        size_t key_len;
        json_t *member;
        void *tmp;
        json_object_keylen_foreach_safe(v, tmp, key, key_len, member)
        {
            int m = rt_js_get(js, i, key);
            if (m < 0 || strlen(key) != key_len || !rt_jscan_diff_same(member, js, m)) return false;
        }
        return true;
    }
    case JSON_ARRAY: {
        if (t != RT_JS_ARRAY || json_array_size(v) != js->tok[i].count) return false;
        int e = rt_js_first(js, i);
        for (size_t k = 0; k < json_array_size(v); k++, e = rt_js_after(js, i, e))
            if (e < 0 || !rt_jscan_diff_same(json_array_get(v, k), js, e)) return false;
        return e < 0;
    }
    case JSON_STRING: {
        if (t != RT_JS_STRING || rt_js_strlen(js, i) != json_string_length(v)) return false;
        char *s = rt_js_strdup(js, i);
        bool same = s && !memcmp(s, json_string_value(v), json_string_length(v)) &&
                    rt_js_streq(js, i, json_string_value(v));
        free(s);
        return same;
    }
    case JSON_INTEGER: return t == RT_JS_INTEGER && rt_js_integer(js, i) == json_integer_value(v);
    case JSON_REAL: return t == RT_JS_REAL;
    case JSON_TRUE: return t == RT_JS_TRUE;
    case JSON_FALSE: return t == RT_JS_FALSE;
    case JSON_NULL: return t == RT_JS_NULL;
    }
    return false;
}

/* 0 when jscan and jansson agree on text; 1 when one accepts what the other refuses; 2
 * when both accept but the trees differ. (jscan running out of memory counts as agreeing.)
 * One deliberate difference: jansson's reader takes a NUL byte outside a string for the
 * end of its buffer and then sometimes accepts the document ("[1\0]"); JSON has no such
 * byte, and jscan refuses any input that contains one. */
static inline int rt_jscan_diff(const char *text, size_t len)
{
    json_error_t error;
    json_t *root = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &error);
    rt_jscan js;
    rt_jscan_init(&js);
    int rc = rt_jscan_parse(&js, text, len);
    int result = 0;
    if (rc == RT_ENOMEM)
        result = 0;
    else if (memchr(text, '\0', len))
        result = rc == RT_OK;
    else if ((rc == RT_OK) != (root != NULL))
        result = 1;
    else if (root && !rt_jscan_diff_same(root, &js, 0))
        result = 2;
    rt_jscan_free(&js);
    json_decref(root);
    return result;
}

#endif
