/* SPDX-License-Identifier: MPL-2.0 */
/* jscan.h - a strict JSON scanner that does not build a tree of allocated values.
 *
 * rt_jscan_parse() validates a whole document (RFC 8259: strings in valid UTF-8 without
 * raw control characters or \u0000, paired surrogate escapes, no leading zeros, integers
 * that fit a long long, reals that do not overflow, nesting at most 2048 deep, no
 * duplicate member names in any object) and records one flat token per value, in document
 * order, into a buffer that starts inside the scanner and moves to the heap only for large
 * documents. It accepts exactly what jansson's json_loadb(JSON_DECODE_ANY |
 * JSON_REJECT_DUPLICATES) accepts, except that a NUL byte anywhere is refused (jansson
 * sometimes skips one), and gives the same values (fuzz_jscan and test_jscan check that),
 * at a fraction of the cost: retrig-classify parses every Pulse message with it.
 *
 * Tokens are addressed by index; the document is token 0. An object's children are its
 * member names, each followed by its value; every token's `next` is the index of the first
 * token after its subtree, so siblings are walked without descending. Strings are decoded
 * only when asked for. The scanner keeps pointers into the text: the text must outlive it. */
#ifndef RETRIG_COMMON_JSCAN_H
#define RETRIG_COMMON_JSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/core/errors.h"

#define RT_JSCAN_MAX_DEPTH  2048
#define RT_JSCAN_LOCAL_TOKS 192
#define RT_JSCAN_ERR_SIZE   96
#define RT_JSCAN_MAX_TOKENS (1 << 20) /* values in one document (20 bytes each: 20 MB at most) */

typedef enum {
    RT_JS_OBJECT = 1,
    RT_JS_ARRAY,
    RT_JS_STRING,
    RT_JS_INTEGER, /* a number without fraction or exponent */
    RT_JS_REAL,
    RT_JS_TRUE,
    RT_JS_FALSE,
    RT_JS_NULL,
} rt_js_type;

typedef struct rt_js_token {
    uint32_t start;  /* byte offset; strings: just after the opening quote */
    uint32_t len;    /* bytes; strings: the raw contents between the quotes */
    uint32_t next;   /* index of the first token after this one's subtree */
    uint32_t count;  /* objects: members; arrays: elements */
    uint8_t type;    /* rt_js_type */
    uint8_t escaped; /* strings: contains at least one backslash escape */
} rt_js_token;

typedef struct rt_jscan {
    const char *text;
    size_t len;
    rt_js_token *tok;
    size_t ntok, cap;
    char err[RT_JSCAN_ERR_SIZE]; /* why the last parse failed: "line 1 offset 12: ..." */
    bool too_many;               /* the last parse failed past RT_JSCAN_MAX_TOKENS values */
    rt_js_token local[RT_JSCAN_LOCAL_TOKS];
} rt_jscan;

/* Prepares a scanner (no allocation). */
void rt_jscan_init(rt_jscan *js);
/* Parses text[0..len). RT_OK; RT_EPROTO when it is not one valid JSON document, or holds
 * more than RT_JSCAN_MAX_TOKENS values (js->err says why; too_many is set); RT_ENOMEM. A
 * scanner may parse many documents in turn. */
RT_MUSTCHECK int rt_jscan_parse(rt_jscan *js, const char *text, size_t len);
/* Frees the heap buffer, if any. */
void rt_jscan_free(rt_jscan *js);

/* The type of token i (0 when i is out of range). */
rt_js_type rt_js_type_of(const rt_jscan *js, int i);
/* The value of member `key` of object token obj; -1 when absent or obj is not an object. */
int rt_js_get(const rt_jscan *js, int obj, const char *key);
/* The first child of container i (for objects: the first member name), -1 when empty. */
int rt_js_first(const rt_jscan *js, int i);
/* The sibling after child i of the same container (for objects give and get member
 * names), -1 after the last; `parent` is the container. */
int rt_js_after(const rt_jscan *js, int parent, int i);
/* Decoded length in bytes of string token i (UTF-8). */
size_t rt_js_strlen(const rt_jscan *js, int i);
/* The decoded string token i as a malloc'd NUL-terminated string; NULL on ENOMEM. */
char *rt_js_strdup(const rt_jscan *js, int i);
/* True when string token i decodes to exactly s. */
bool rt_js_streq(const rt_jscan *js, int i, const char *s);
/* The value of integer token i (0 when i is not an integer). */
long long rt_js_integer(const rt_jscan *js, int i);
/* True when token i is an integer from min to max (*out set); false for another type or an
 * integer out of that range: a field read into an int must never wrap (tier 4294967297 is
 * not tier 1). */
bool rt_js_integer_in(const rt_jscan *js, int i, long long min, long long max, long long *out);

#endif
