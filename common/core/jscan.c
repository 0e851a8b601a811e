/* SPDX-License-Identifier: MPL-2.0 */
/* jscan.c - strict JSON validation into a flat token array (see jscan.h). */
#include "common/core/jscan.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/utf8.h"

typedef struct parser {
    rt_jscan *js;
    const unsigned char *s;
    size_t len, pos;
} parser;

static int fail(parser *p, const char *fmt, ...) RT_PRINTF(2, 3);
static int fail(parser *p, const char *fmt, ...)
{
    int n = snprintf(p->js->err, sizeof p->js->err, "offset %zu: ", p->pos);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof p->js->err)
        rt_utf8_vformat(p->js->err + n, sizeof p->js->err - (size_t)n, fmt, ap);
    va_end(ap);
    return RT_EPROTO;
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

/* Appends a token; its index, -1 on ENOMEM, -2 past RT_JSCAN_MAX_TOKENS. */
static long push(parser *p, rt_js_type type, size_t start)
{
    rt_jscan *js = p->js;
    if (js->ntok >= RT_JSCAN_MAX_TOKENS) return -2;
    if (js->ntok == js->cap) {
        size_t cap = js->cap * 2 < RT_JSCAN_MAX_TOKENS ? js->cap * 2 : RT_JSCAN_MAX_TOKENS;
        rt_js_token *tok;
        if (js->tok == js->local) {
            tok = malloc(cap * sizeof *tok);
            if (tok) memcpy(tok, js->local, js->ntok * sizeof *tok);
        } else {
            tok = realloc(js->tok, cap * sizeof *tok);
        }
        if (!tok) return -1;
        js->tok = tok;
        js->cap = cap;
    }
    rt_js_token *t = &js->tok[js->ntok];
    memset(t, 0, sizeof *t);
    t->type = (uint8_t)type;
    t->start = (uint32_t)start;
    return (long)js->ntok++;
}

/* What a failed push means: out of memory, or a document of too many values (each costs a
 * token of 20 bytes: 10 MB of "[0,0,...]" held 300 MB of them). */
static int pushed_nothing(parser *p, long idx)
{
    if (idx != -2) return RT_ENOMEM;
    p->js->too_many = true;
    return fail(p, "more than %d values", RT_JSCAN_MAX_TOKENS);
}

static int hex4(const unsigned char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    *out = v;
    return 0;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0], v;
    size_t len;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        v = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        v = c & 0x07;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (len == 3 && (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF))) return 0;
    if (len == 4 && (v < 0x10000 || v > 0x10FFFF)) return 0;
    return len;
}

static int parse_string(parser *p)
{
    size_t open = p->pos++;
    long idx = push(p, RT_JS_STRING, p->pos);
    if (idx < 0) return pushed_nothing(p, idx);
    bool escaped = false;
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            p->pos++; /* the common case: plain ASCII */
            continue;
        }
        if (c == '"') {
            rt_js_token *t = &p->js->tok[idx];
            t->len = (uint32_t)(p->pos - open - 1);
            t->escaped = escaped;
            t->next = (uint32_t)p->js->ntok;
            p->pos++;
            return RT_OK;
        }
        if (c < 0x20) return fail(p, "control character 0x%02x in a string", c);
        if (c == '\\') {
            escaped = true;
            if (p->pos + 1 >= p->len) break;
            unsigned char e = p->s[p->pos + 1];
            if (e && strchr("\"\\/bfnrt", e)) {
                p->pos += 2;
                continue;
            }
            if (e != 'u') return fail(p, "invalid escape '\\%c'", e >= 0x20 && e < 0x7f ? e : '?');
            unsigned v, lo;
            if (p->pos + 6 > p->len || hex4(p->s + p->pos + 2, &v))
                return fail(p, "invalid \\u escape");
            if (v == 0) return fail(p, "\\u0000 is not allowed");
            if (v >= 0xDC00 && v <= 0xDFFF) return fail(p, "lone low surrogate \\u%04X", v);
            if (v >= 0xD800 && v <= 0xDBFF) {
                if (p->pos + 12 > p->len || p->s[p->pos + 6] != '\\' || p->s[p->pos + 7] != 'u' ||
                    hex4(p->s + p->pos + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                    return fail(p, "unpaired high surrogate \\u%04X", v);
                p->pos += 12;
            } else {
                p->pos += 6;
            }
            continue;
        }
        size_t n = utf8_seq(p->s + p->pos, p->len - p->pos);
        if (!n) return fail(p, "invalid UTF-8 in a string");
        p->pos += n;
    }
    p->pos = p->len;
    return fail(p, "unterminated string");
}

static int parse_number(parser *p)
{
    size_t start = p->pos;
    const unsigned char *s = p->s;
    bool integer = true;
    if (p->pos < p->len && s[p->pos] == '-') p->pos++;
    if (p->pos >= p->len) return fail(p, "invalid number");
    if (s[p->pos] == '0') {
        p->pos++;
    } else if (s[p->pos] >= '1' && s[p->pos] <= '9') {
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
    } else {
        return fail(p, "invalid number");
    }
    if (p->pos < p->len && s[p->pos] == '.') {
        integer = false;
        p->pos++;
        if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
            return fail(p, "invalid number");
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
    }
    if (p->pos < p->len && (s[p->pos] == 'e' || s[p->pos] == 'E')) {
        integer = false;
        p->pos++;
        if (p->pos < p->len && (s[p->pos] == '+' || s[p->pos] == '-')) p->pos++;
        if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
            return fail(p, "invalid number");
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
    }
    size_t len = p->pos - start;
    /* Range checks need a NUL-terminated copy; numbers are short unless hostile. */
    char small[64], *copy = len < sizeof small ? small : malloc(len + 1);
    if (!copy) return RT_ENOMEM;
    memcpy(copy, s + start, len);
    copy[len] = '\0';
    errno = 0;
    bool range;
    if (integer) {
        (void)strtoll(copy, NULL, 10);
        range = errno == ERANGE;
    } else {
        double d = strtod(copy, NULL);
        range = errno == ERANGE && isinf(d);
    }
    if (copy != small) free(copy);
    if (range) return fail(p, "number out of range");
    long idx = push(p, integer ? RT_JS_INTEGER : RT_JS_REAL, start);
    if (idx < 0) return pushed_nothing(p, idx);
    p->js->tok[idx].len = (uint32_t)len;
    p->js->tok[idx].next = (uint32_t)p->js->ntok;
    return RT_OK;
}

/* ---- decoding ---- */

/* Walks the decoded bytes of a string token. */
typedef struct decoder {
    const unsigned char *s, *end;
    unsigned char pending[4];
    int npending, ipending;
} decoder;

static void decoder_init(decoder *d, const rt_jscan *js, int i)
{
    d->s = (const unsigned char *)js->text + js->tok[i].start;
    d->end = d->s + js->tok[i].len;
    d->npending = d->ipending = 0;
}

/* The next decoded byte, -1 at the end. The string was validated by the parser. */
static int decoder_next(decoder *d)
{
    if (d->ipending < d->npending) return d->pending[d->ipending++];
    if (d->s >= d->end) return -1;
    unsigned char c = *d->s++;
    if (c != '\\') return c;
    unsigned char e = *d->s++;
    switch (e) {
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'u': break;
    default: return e; /* " \ / */
    }
    unsigned v = 0, lo = 0;
    (void)hex4(d->s, &v);
    d->s += 4;
    if (v >= 0xD800 && v <= 0xDBFF) {
        (void)hex4(d->s + 2, &lo);
        d->s += 6;
        v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
    }
    d->npending = d->ipending = 0;
    if (v < 0x80) {
        d->pending[d->npending++] = (unsigned char)v;
    } else if (v < 0x800) {
        d->pending[d->npending++] = (unsigned char)(0xC0 | (v >> 6));
        d->pending[d->npending++] = (unsigned char)(0x80 | (v & 0x3F));
    } else if (v < 0x10000) {
        d->pending[d->npending++] = (unsigned char)(0xE0 | (v >> 12));
        d->pending[d->npending++] = (unsigned char)(0x80 | ((v >> 6) & 0x3F));
        d->pending[d->npending++] = (unsigned char)(0x80 | (v & 0x3F));
    } else {
        d->pending[d->npending++] = (unsigned char)(0xF0 | (v >> 18));
        d->pending[d->npending++] = (unsigned char)(0x80 | ((v >> 12) & 0x3F));
        d->pending[d->npending++] = (unsigned char)(0x80 | ((v >> 6) & 0x3F));
        d->pending[d->npending++] = (unsigned char)(0x80 | (v & 0x3F));
    }
    return d->pending[d->ipending++];
}

/* Orders two string tokens by their decoded bytes. */
static int compare_strings(const rt_jscan *js, int a, int b)
{
    const rt_js_token *ta = &js->tok[a], *tb = &js->tok[b];
    if (!ta->escaped && !tb->escaped) {
        size_t n = ta->len < tb->len ? ta->len : tb->len;
        int c = memcmp(js->text + ta->start, js->text + tb->start, n);
        if (c) return c;
        return ta->len < tb->len ? -1 : ta->len > tb->len;
    }
    decoder da, db;
    decoder_init(&da, js, a);
    decoder_init(&db, js, b);
    for (;;) {
        int ca = decoder_next(&da), cb = decoder_next(&db);
        if (ca != cb) return ca < cb ? -1 : 1;
        if (ca < 0) return 0;
    }
}

/* qsort has no context argument; one per thread, as every lane of a worker scans. */
static _Thread_local const rt_jscan *sort_js;

static int compare_keys(const void *a, const void *b)
{
    return compare_strings(sort_js, *(const int *)a, *(const int *)b);
}

/* Fails when two members of object token obj have the same name. */
static int check_duplicates(parser *p, long obj)
{
    rt_jscan *js = p->js;
    uint32_t count = js->tok[obj].count;
    if (count < 2) return RT_OK;
    if (count <= 16) {
        int keys[16], n = 0;
        for (int k = (int)obj + 1; n < (int)count; k = (int)js->tok[k + 1].next) keys[n++] = k;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (js->tok[keys[i]].len == js->tok[keys[j]].len || js->tok[keys[i]].escaped ||
                    js->tok[keys[j]].escaped)
                    if (!compare_strings(js, keys[i], keys[j]))
                        return fail(p, "duplicate object key");
        return RT_OK;
    }
    int *keys = malloc(count * sizeof *keys);
    if (!keys) return RT_ENOMEM;
    int k = (int)obj + 1;
    for (uint32_t n = 0; n < count; n++, k = (int)js->tok[k + 1].next) keys[n] = k;
    sort_js = js;
    qsort(keys, count, sizeof *keys, compare_keys);
    int rc = RT_OK;
    for (uint32_t n = 1; n < count && rc == RT_OK; n++)
        if (!compare_strings(js, keys[n - 1], keys[n])) rc = fail(p, "duplicate object key");
    free(keys);
    return rc;
}

/* depth: containers around this value + 1, as jansson counts it. */
static int parse_value(parser *p, int depth)
{
    if (depth > RT_JSCAN_MAX_DEPTH) return fail(p, "maximum nesting depth reached");
    skip_ws(p);
    if (p->pos >= p->len) return fail(p, "unexpected end of input");
    unsigned char c = p->s[p->pos];
    int rc;
    if (c == '{' || c == '[') {
        bool object = c == '{';
        unsigned char close = object ? '}' : ']';
        long idx = push(p, object ? RT_JS_OBJECT : RT_JS_ARRAY, p->pos);
        if (idx < 0) return pushed_nothing(p, idx);
        size_t start = p->pos++;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
        } else {
            for (;;) {
                if (object) {
                    skip_ws(p);
                    if (p->pos >= p->len || p->s[p->pos] != '"')
                        return fail(p, "string or '}' expected");
                    if ((rc = parse_string(p))) return rc;
                    skip_ws(p);
                    if (p->pos >= p->len || p->s[p->pos] != ':') return fail(p, "':' expected");
                    p->pos++;
                }
                if ((rc = parse_value(p, depth + 1))) return rc;
                p->js->tok[idx].count++;
                skip_ws(p);
                if (p->pos < p->len && p->s[p->pos] == ',') {
                    p->pos++;
                    continue;
                }
                if (p->pos < p->len && p->s[p->pos] == close) {
                    p->pos++;
                    break;
                }
                return fail(p, "',' or '%c' expected", close);
            }
        }
        rt_js_token *t = &p->js->tok[idx];
        t->len = (uint32_t)(p->pos - start);
        t->next = (uint32_t)p->js->ntok;
        return object ? check_duplicates(p, idx) : RT_OK;
    }
    if (c == '"') return parse_string(p);
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p);
    static const struct {
        const char *word;
        rt_js_type type;
    } words[] = {{"true", RT_JS_TRUE}, {"false", RT_JS_FALSE}, {"null", RT_JS_NULL}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i].word);
        if (p->len - p->pos >= n && !memcmp(p->s + p->pos, words[i].word, n)) {
            long idx = push(p, words[i].type, p->pos);
            if (idx < 0) return pushed_nothing(p, idx);
            p->pos += n;
            p->js->tok[idx].len = (uint32_t)n;
            p->js->tok[idx].next = (uint32_t)p->js->ntok;
            return RT_OK;
        }
    }
    return fail(p, "invalid token");
}

void rt_jscan_init(rt_jscan *js)
{
    js->text = NULL;
    js->len = 0;
    js->tok = js->local;
    js->ntok = 0;
    js->cap = RT_JSCAN_LOCAL_TOKS;
    js->err[0] = '\0';
    js->too_many = false;
}

int rt_jscan_parse(rt_jscan *js, const char *text, size_t len)
{
    parser p = {.js = js, .s = (const unsigned char *)text, .len = len, .pos = 0};
    js->text = text;
    js->len = len;
    js->ntok = 0;
    js->err[0] = '\0';
    js->too_many = false;
    if (len >= UINT32_MAX) return fail(&p, "document too large");
    int rc = parse_value(&p, 1);
    if (rc == RT_OK) {
        skip_ws(&p);
        if (p.pos != p.len) rc = fail(&p, "end of input expected");
    }
    if (rc != RT_OK) js->ntok = 0;
    if (rc == RT_ENOMEM) snprintf(js->err, sizeof js->err, "out of memory");
    return rc;
}

void rt_jscan_free(rt_jscan *js)
{
    if (!js) return;
    if (js->tok != js->local) free(js->tok);
    rt_jscan_init(js);
}

rt_js_type rt_js_type_of(const rt_jscan *js, int i)
{
    if (i < 0 || (size_t)i >= js->ntok) return 0;
    return (rt_js_type)js->tok[i].type;
}

int rt_js_first(const rt_jscan *js, int i)
{
    rt_js_type t = rt_js_type_of(js, i);
    if ((t != RT_JS_OBJECT && t != RT_JS_ARRAY) || !js->tok[i].count) return -1;
    return i + 1;
}

int rt_js_after(const rt_jscan *js, int parent, int i)
{
    uint32_t next =
        rt_js_type_of(js, parent) == RT_JS_OBJECT ? js->tok[i + 1].next : js->tok[i].next;
    return next < js->tok[parent].next ? (int)next : -1;
}

int rt_js_get(const rt_jscan *js, int obj, const char *key)
{
    if (rt_js_type_of(js, obj) != RT_JS_OBJECT) return -1;
    for (int k = rt_js_first(js, obj); k >= 0; k = rt_js_after(js, obj, k))
        if (rt_js_streq(js, k, key)) return k + 1;
    return -1;
}

size_t rt_js_strlen(const rt_jscan *js, int i)
{
    if (!js->tok[i].escaped) return js->tok[i].len;
    decoder d;
    decoder_init(&d, js, i);
    size_t n = 0;
    while (decoder_next(&d) >= 0) n++;
    return n;
}

char *rt_js_strdup(const rt_jscan *js, int i)
{
    size_t n = rt_js_strlen(js, i);
    char *out = malloc(n + 1);
    if (!out) return NULL;
    if (!js->tok[i].escaped) {
        memcpy(out, js->text + js->tok[i].start, n);
    } else {
        decoder d;
        decoder_init(&d, js, i);
        for (size_t k = 0; k < n; k++) out[k] = (char)decoder_next(&d);
    }
    out[n] = '\0';
    return out;
}

bool rt_js_streq(const rt_jscan *js, int i, const char *s)
{
    if (rt_js_type_of(js, i) != RT_JS_STRING) return false;
    const rt_js_token *t = &js->tok[i];
    if (!t->escaped) return strlen(s) == t->len && !memcmp(js->text + t->start, s, t->len);
    decoder d;
    decoder_init(&d, js, i);
    const unsigned char *u = (const unsigned char *)s;
    for (;; u++) {
        int c = decoder_next(&d);
        if (c < 0) return *u == '\0';
        if (*u == '\0' || c != *u) return false;
    }
}

bool rt_js_integer_in(const rt_jscan *js, int i, long long min, long long max, long long *out)
{
    if (rt_js_type_of(js, i) != RT_JS_INTEGER) return false;
    long long v = rt_js_integer(js, i); /* the scanner refused integers a long long cannot hold */
    if (v < min || v > max) return false;
    *out = v;
    return true;
}

long long rt_js_integer(const rt_jscan *js, int i)
{
    if (rt_js_type_of(js, i) != RT_JS_INTEGER) return 0;
    char buf[32];
    uint32_t n = js->tok[i].len < sizeof buf ? js->tok[i].len : (uint32_t)sizeof buf - 1;
    memcpy(buf, js->text + js->tok[i].start, n);
    buf[n] = '\0';
    return strtoll(buf, NULL, 10);
}
