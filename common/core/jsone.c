/* SPDX-License-Identifier: MPL-2.0 */
/* jsone.c - JSON-e rendering (the subset described in jsone.h): a template walker, a lazy
 * tokenizer, a recursive-descent expression parser building a small tree, and its
 * evaluator. Semantics follow the JSON-e reference implementation. Pure, no globals. */
#include "common/core/jsone.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/utf8.h"

#define MAX_PARSE_DEPTH 600 /* parser recursion (about 8 per nesting level) */
#define MAX_TREE_HEIGHT 400 /* expression tree height */

#define MAX_NUMBER_LITERAL 1024 /* characters of a number literal in an expression */

typedef struct jstate {
    char *errstr;
    long steps_left;   /* work budget */
    size_t bytes_left; /* bytes of text all strings made while rendering may hold */
} jstate;

static int fail(jstate *st, int rc, const char *fmt, ...) RT_PRINTF(3, 4);
static int fail(jstate *st, int rc, const char *fmt, ...)
{
    if (st->errstr) {
        char buf[RT_ERRSTR_SIZE];
        va_list ap;
        va_start(ap, fmt);
        rt_utf8_vformat(buf, sizeof buf, fmt, ap);
        va_end(ap);
        rt_set_errstr(st->errstr, "%s", buf);
    }
    return rc;
}

static int spend(jstate *st, long steps)
{
    st->steps_left -= steps;
    if (st->steps_left < 0)
        return fail(st, RT_ETOOBIG, "JSON-e: template needs more than %ld steps to render",
                    (long)RT_JSONE_MAX_STEPS);
    return RT_OK;
}

static int no_memory(jstate *st) { return fail(st, RT_ENOMEM, "JSON-e: out of memory"); }

/* ---- values ------------------------------------------------------------------------ */

static bool is_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

static bool is_truthy(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL:
    case JSON_FALSE: return false;
    case JSON_INTEGER: return json_integer_value(v) != 0;
    case JSON_REAL: return json_real_value(v) != 0.0;
    case JSON_STRING: return json_string_length(v) > 0;
    case JSON_ARRAY: return json_array_size(v) > 0;
    case JSON_OBJECT: return json_object_size(v) > 0;
    default: return true;
    }
}

/* JavaScript has one number type: integral results within 2^53 become JSON integers. */
static json_t *make_number(double d)
{
    if (d == floor(d) && fabs(d) <= 9007199254740992.0) return json_integer((json_int_t)d);
    return json_real(d);
}

static bool integral_index(const json_t *v, long long *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == floor(d) && fabs(d) <= 9007199254740992.0) {
            *out = (long long)d;
            return true;
        }
    }
    return false;
}

/* JSON-e's isEqual: deep, numbers by value. */
static int deep_equal(jstate *st, const json_t *a, const json_t *b, int depth, bool *equal)
{
    int rc;
    *equal = false;
    if ((rc = spend(st, 1))) return rc;
    if (depth > RT_JSONE_MAX_DEPTH)
        return fail(st, RT_ETOOBIG, "JSON-e: values nested deeper than %d", RT_JSONE_MAX_DEPTH);
    if (a == b) {
        *equal = true;
        return RT_OK;
    }
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            *equal = json_integer_value(a) == json_integer_value(b);
        else
            *equal = json_number_value(a) == json_number_value(b);
        return RT_OK;
    }
    if (json_typeof(a) != json_typeof(b)) return RT_OK;
    switch (json_typeof(a)) {
    case JSON_STRING:
        if ((rc = spend(st, (long)(json_string_length(a) / 64)))) return rc;
        *equal = json_string_length(a) == json_string_length(b) &&
                 memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
        return RT_OK;
    case JSON_ARRAY:
        if (json_array_size(a) != json_array_size(b)) return RT_OK;
        for (size_t i = 0; i < json_array_size(a); i++) {
            if ((rc = deep_equal(st, json_array_get(a, i), json_array_get(b, i), depth + 1, equal)))
                return rc;
            if (!*equal) return RT_OK;
        }
        *equal = true;
        return RT_OK;
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b)) return RT_OK;
        const char *key;
        json_t *va;
        json_object_foreach((json_t *)a, key, va)
        {
            json_t *vb = json_object_get(b, key);
            if (!vb) return RT_OK;
            if ((rc = deep_equal(st, va, vb, depth + 1, equal))) return rc;
            if (!*equal) return RT_OK;
        }
        *equal = true;
        return RT_OK;
    }
    default: *equal = true; return RT_OK; /* true, false, null: same type */
    }
}

/* ---- text buffers -------------------------------------------------------------------- */

typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

static int buf_add(jstate *st, buf *b, const char *s, size_t n)
{
    if (n > RT_JSONE_MAX_STRING - b->len)
        return fail(st, RT_ETOOBIG, "JSON-e: a string grew over %d bytes", RT_JSONE_MAX_STRING);
    if (n > st->bytes_left)
        return fail(st, RT_ETOOBIG, "JSON-e: rendering made more than %d bytes of strings",
                    RT_JSONE_MAX_TEXT);
    st->bytes_left -= n;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) return no_memory(st);
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return RT_OK;
}

static int buf_adds(jstate *st, buf *b, const char *s) { return buf_add(st, b, s, strlen(s)); }

/* Number::prototype.toString of JavaScript, for finite doubles. */
static void format_double(double d, char *out, size_t size)
{
    char text[64], *o = text;
    if (d < 0) {
        *o++ = '-';
        d = -d;
    }
    if (d == 0) {
        snprintf(out, size, "0");
        return;
    }
    char sci[40];
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(sci, sizeof sci, "%.*e", precision - 1, d);
        if (strtod(sci, NULL) == d) break;
    }
    /* sci is "D[.DDD]e[+-]XX": the shortest digits that read back as d, and the exponent. */
    char digits[24];
    int k = 0;
    const char *p = sci;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && k < 20) digits[k++] = *p;
    int n = atoi(p + 1) + 1; /* d = 0.DIGITS * 10^n */
    if (k <= n && n <= 21) {
        for (int i = 0; i < n; i++) *o++ = i < k ? digits[i] : '0';
    } else if (0 < n && n <= 21) {
        for (int i = 0; i < k; i++) {
            if (i == n) *o++ = '.';
            *o++ = digits[i];
        }
    } else if (-6 < n && n <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -n; i++) *o++ = '0';
        for (int i = 0; i < k; i++) *o++ = digits[i];
    } else {
        *o++ = digits[0];
        if (k > 1) *o++ = '.';
        for (int i = 1; i < k; i++) *o++ = digits[i];
        o += snprintf(o, 8, "e%c%d", n - 1 < 0 ? '-' : '+', n - 1 < 0 ? 1 - n : n - 1);
    }
    *o = '\0';
    snprintf(out, size, "%s", text);
}

static void format_number(const json_t *v, char *out, size_t size)
{
    if (json_is_integer(v))
        snprintf(out, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else
        format_double(json_real_value(v), out, size);
}

static int add_json_string(jstate *st, buf *b, const char *s, size_t n)
{
    int rc;
    if ((rc = buf_add(st, b, "\"", 1))) return rc;
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        if ((rc = buf_add(st, b, s + start, i - start))) return rc;
        char esc[8];
        switch (c) {
        case '"': snprintf(esc, sizeof esc, "\\\""); break;
        case '\\': snprintf(esc, sizeof esc, "\\\\"); break;
        case '\b': snprintf(esc, sizeof esc, "\\b"); break;
        case '\f': snprintf(esc, sizeof esc, "\\f"); break;
        case '\n': snprintf(esc, sizeof esc, "\\n"); break;
        case '\r': snprintf(esc, sizeof esc, "\\r"); break;
        case '\t': snprintf(esc, sizeof esc, "\\t"); break;
        default: snprintf(esc, sizeof esc, "\\u%04x", c); break;
        }
        if ((rc = buf_adds(st, b, esc))) return rc;
        start = i + 1;
    }
    if ((rc = buf_add(st, b, s + start, n - start))) return rc;
    return buf_add(st, b, "\"", 1);
}

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* JSON with sorted keys and no spaces, like json-stable-stringify. */
static int stringify(jstate *st, buf *b, const json_t *v, int depth)
{
    int rc;
    if ((rc = spend(st, 1))) return rc;
    if (depth > RT_JSONE_MAX_DEPTH)
        return fail(st, RT_ETOOBIG, "JSON-e: values nested deeper than %d", RT_JSONE_MAX_DEPTH);
    char num[64];
    switch (json_typeof(v)) {
    case JSON_NULL: return buf_adds(st, b, "null");
    case JSON_TRUE: return buf_adds(st, b, "true");
    case JSON_FALSE: return buf_adds(st, b, "false");
    case JSON_INTEGER:
    case JSON_REAL: format_number(v, num, sizeof num); return buf_adds(st, b, num);
    case JSON_STRING: return add_json_string(st, b, json_string_value(v), json_string_length(v));
    case JSON_ARRAY:
        if ((rc = buf_add(st, b, "[", 1))) return rc;
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i && (rc = buf_add(st, b, ",", 1))) return rc;
            if ((rc = stringify(st, b, json_array_get(v, i), depth + 1))) return rc;
        }
        return buf_add(st, b, "]", 1);
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys) return no_memory(st);
        const char *key;
        json_t *item;
        json_object_foreach((json_t *)v, key, item) keys[i++] = key;
        qsort(keys, n, sizeof *keys, compare_keys);
        rc = buf_add(st, b, "{", 1);
        for (i = 0; i < n && !rc; i++) {
            if (i) rc = buf_add(st, b, ",", 1);
            if (!rc) rc = add_json_string(st, b, keys[i], strlen(keys[i]));
            if (!rc) rc = buf_add(st, b, ":", 1);
            if (!rc) rc = stringify(st, b, json_object_get(v, keys[i]), depth + 1);
        }
        free(keys);
        return rc ? rc : buf_add(st, b, "}", 1);
    }
    default: return fail(st, RT_EPROTO, "JSON-e: cannot serialise a value");
    }
}

/* ---- tokens ---------------------------------------------------------------------------- */

enum {
    T_END,
    T_NUMBER,
    T_STRING,
    T_IDENT,
    T_TRUE,
    T_FALSE,
    T_NULL,
    T_IN,
    T_POW,
    T_PLUS,
    T_MINUS,
    T_MUL,
    T_DIV,
    T_LBRACKET,
    T_RBRACKET,
    T_DOT,
    T_LPAREN,
    T_RPAREN,
    T_LBRACE,
    T_RBRACE,
    T_COLON,
    T_COMMA,
    T_GE,
    T_LE,
    T_LT,
    T_GT,
    T_EQ,
    T_NE,
    T_NOT,
    T_AND,
    T_OR,
};

static const char *const TOKEN_NAMES[] = {
    "end of input",
    "number",
    "string",
    "identifier",
    "true",
    "false",
    "null",
    "in",
    "**",
    "+",
    "-",
    "*",
    "/",
    "[",
    "]",
    ".",
    "(",
    ")",
    "{",
    "}",
    ":",
    ",",
    ">=",
    "<=",
    "<",
    ">",
    "==",
    "!=",
    "!",
    "&&",
    "||",
};

typedef struct token {
    int kind;
    size_t start, end;
} token;

typedef struct parser {
    jstate *st;
    const char *src;
    size_t len;
    token cur;
    int depth;
} parser;

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Reads the token starting at or after offset into p->cur. Tokenizing is lazy, as in
 * JSON-e: text after an interpolation's closing brace is never tokenized. */
static int next_token(parser *p, size_t offset)
{
    const char *s = p->src;
    size_t i = offset;
    while (i < p->len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ||
                          s[i] == '\f' || s[i] == '\v'))
        i++;
    p->cur.start = i;
    if (i >= p->len) {
        p->cur.kind = T_END;
        p->cur.end = i;
        return RT_OK;
    }
    char c = s[i], d = i + 1 < p->len ? s[i + 1] : '\0';
    int kind = -1;
    size_t end = i + 1;
    if (c >= '0' && c <= '9') {
        while (end < p->len && s[end] >= '0' && s[end] <= '9') end++;
        if (end + 1 < p->len && s[end] == '.' && s[end + 1] >= '0' && s[end + 1] <= '9') {
            end += 2;
            while (end < p->len && s[end] >= '0' && s[end] <= '9') end++;
        }
        kind = T_NUMBER;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
        while (end < p->len && ident_char(s[end])) end++;
        size_t n = end - i;
        kind = T_IDENT;
        if (n == 4 && memcmp(s + i, "true", 4) == 0) kind = T_TRUE;
        if (n == 5 && memcmp(s + i, "false", 5) == 0) kind = T_FALSE;
        if (n == 4 && memcmp(s + i, "null", 4) == 0) kind = T_NULL;
        if (n == 2 && memcmp(s + i, "in", 2) == 0) kind = T_IN;
    } else if (c == '"' || c == '\'') {
        while (end < p->len && s[end] != c) end++;
        if (end >= p->len)
            return fail(p->st, RT_EPROTO, "JSON-e: unterminated string in expression at offset %zu",
                        i);
        end++;
        kind = T_STRING;
    } else {
        end = i + 2;
        if (c == '*' && d == '*')
            kind = T_POW;
        else if (c == '>' && d == '=')
            kind = T_GE;
        else if (c == '<' && d == '=')
            kind = T_LE;
        else if (c == '=' && d == '=')
            kind = T_EQ;
        else if (c == '!' && d == '=')
            kind = T_NE;
        else if (c == '&' && d == '&')
            kind = T_AND;
        else if (c == '|' && d == '|')
            kind = T_OR;
        else {
            static const char singles[] = "+-*/[].(){}:,<>!";
            static const int kinds[] = {
                T_PLUS,   T_MINUS,  T_MUL,    T_DIV,   T_LBRACKET, T_RBRACKET, T_DOT, T_LPAREN,
                T_RPAREN, T_LBRACE, T_RBRACE, T_COLON, T_COMMA,    T_LT,       T_GT,  T_NOT};
            const char *at = c ? strchr(singles, c) : NULL;
            if (at) kind = kinds[at - singles];
            end = i + 1;
        }
    }
    if (kind < 0)
        return fail(p->st, RT_EPROTO,
                    "JSON-e: unexpected character '%c' in expression at offset %zu",
                    (c >= 0x20 && c < 0x7f) ? c : '?', i);
    p->cur.kind = kind;
    p->cur.end = end;
    return RT_OK;
}

static int unexpected(parser *p)
{
    if (p->cur.kind == T_END) return fail(p->st, RT_EPROTO, "JSON-e: unexpected end of expression");
    return fail(p->st, RT_EPROTO, "JSON-e: unexpected token '%.*s' at offset %zu in expression",
                (int)(p->cur.end - p->cur.start > 32 ? 32 : p->cur.end - p->cur.start),
                p->src + p->cur.start, p->cur.start);
}

static int take(parser *p, int kind)
{
    if (p->cur.kind != kind) {
        if (p->cur.kind == T_END)
            return fail(p->st, RT_EPROTO, "JSON-e: unexpected end of expression, expected '%s'",
                        TOKEN_NAMES[kind]);
        return unexpected(p);
    }
    return next_token(p, p->cur.end);
}

/* ---- expression tree --------------------------------------------------------------------- */

enum { N_LITERAL, N_CONTEXT, N_UNARY, N_BINARY, N_DOT, N_INDEX, N_CALL, N_LIST, N_OBJECT };

typedef struct node {
    int kind;
    int op;        /* token kind of the operator */
    int height;    /* of the subtree */
    json_t *value; /* N_LITERAL */
    char *name;    /* N_CONTEXT, N_DOT: the name; N_CALL: the callee's text */
    struct node *left, *right;
    struct node **items; /* N_LIST, N_OBJECT values, N_CALL arguments */
    char **keys;         /* N_OBJECT */
    size_t count;
} node;

static void node_free(node *n)
{
    if (!n) return;
    json_decref(n->value);
    free(n->name);
    node_free(n->left);
    node_free(n->right);
    for (size_t i = 0; i < n->count; i++) {
        node_free(n->items[i]);
        if (n->keys) free(n->keys[i]);
    }
    free(n->items);
    free(n->keys);
    free(n);
}

/* Takes left and right in all cases: on failure they are freed and *out is NULL. */
static int new_node(parser *p, int kind, int op, node *left, node *right, node **out)
{
    int h = 0;
    if (left && left->height > h) h = left->height;
    if (right && right->height > h) h = right->height;
    *out = h < MAX_TREE_HEIGHT ? calloc(1, sizeof **out) : NULL;
    if (!*out) {
        node_free(left);
        node_free(right);
        if (h >= MAX_TREE_HEIGHT)
            return fail(p->st, RT_ETOOBIG, "JSON-e: expression nested deeper than %d",
                        MAX_TREE_HEIGHT);
        return no_memory(p->st);
    }
    (*out)->kind = kind;
    (*out)->op = op;
    (*out)->left = left;
    (*out)->right = right;
    (*out)->height = h + 1;
    return RT_OK;
}

static int push_item(parser *p, node *n, node *item, char *key)
{
    node **items = realloc(n->items, (n->count + 1) * sizeof *items);
    if (items) n->items = items;
    char **keys = NULL;
    if (items && n->kind == N_OBJECT) {
        keys = realloc(n->keys, (n->count + 1) * sizeof *keys);
        if (keys) n->keys = keys;
    }
    if (!items || (n->kind == N_OBJECT && !keys)) {
        node_free(item);
        free(key);
        return no_memory(p->st);
    }
    n->items[n->count] = item;
    if (n->kind == N_OBJECT) n->keys[n->count] = key;
    n->count++;
    if (item && item->height + 1 > n->height) n->height = item->height + 1;
    if (n->height > MAX_TREE_HEIGHT)
        return fail(p->st, RT_ETOOBIG, "JSON-e: expression nested deeper than %d", MAX_TREE_HEIGHT);
    return RT_OK;
}

static char *token_text(parser *p, size_t from, size_t to)
{
    char *s = malloc(to - from + 1);
    if (s) {
        memcpy(s, p->src + from, to - from);
        s[to - from] = '\0';
    }
    return s;
}

static int parse_expression(parser *p, int level, node **out);

static int parse_list_or_object(parser *p, node **out)
{
    bool object = p->cur.kind == T_LBRACE;
    int rc = new_node(p, object ? N_OBJECT : N_LIST, 0, NULL, NULL, out);
    if (rc) return rc;
    if ((rc = next_token(p, p->cur.end))) return rc;
    if (!object) {
        if (p->cur.kind != T_RBRACKET) {
            for (;;) {
                node *item = NULL;
                if ((rc = parse_expression(p, 0, &item))) {
                    node_free(item);
                    return rc;
                }
                if ((rc = push_item(p, *out, item, NULL))) return rc;
                if (p->cur.kind != T_COMMA) break;
                if ((rc = take(p, T_COMMA))) return rc;
            }
        }
        return take(p, T_RBRACKET);
    }
    /* { (STRING | IDENTIFIER) : expr (, ...)* [,] } */
    while (p->cur.kind == T_STRING || p->cur.kind == T_IDENT) {
        char *key = p->cur.kind == T_STRING ? token_text(p, p->cur.start + 1, p->cur.end - 1)
                                            : token_text(p, p->cur.start, p->cur.end);
        if (!key) return no_memory(p->st);
        node *value = NULL;
        if ((rc = next_token(p, p->cur.end)) || (rc = take(p, T_COLON)) ||
            (rc = parse_expression(p, 0, &value))) {
            free(key);
            node_free(value);
            return rc;
        }
        if ((rc = push_item(p, *out, value, key))) return rc;
        if (p->cur.kind == T_RBRACE) break;
        if ((rc = take(p, T_COMMA))) return rc;
    }
    return take(p, T_RBRACE);
}

/* unit : (! | - | +) unit | literal | identifier | ( expr ) | list | object */
static int parse_unit(parser *p, node **out)
{
    int rc;
    *out = NULL;
    if (++p->depth > MAX_PARSE_DEPTH)
        return fail(p->st, RT_ETOOBIG, "JSON-e: expression nested too deeply");
    token t = p->cur;
    switch (t.kind) {
    case T_NOT:
    case T_MINUS:
    case T_PLUS: {
        node *operand = NULL;
        if ((rc = next_token(p, t.end)) || (rc = parse_unit(p, &operand))) {
            node_free(operand);
            break;
        }
        rc = new_node(p, N_UNARY, t.kind, operand, NULL, out);
        break;
    }
    case T_NUMBER:
    case T_STRING:
    case T_TRUE:
    case T_FALSE:
    case T_NULL: {
        json_t *value = NULL;
        if (t.kind == T_NUMBER) {
            /* Parsed whole, to the nearest double as JavaScript's parseFloat does (a literal
             * cut to a buffer's size was a different number); one JSON cannot hold (too big
             * for a double) is an error. */
            size_t n = t.end - t.start;
            if (n > MAX_NUMBER_LITERAL) {
                rc = fail(p->st, RT_EPROTO, "JSON-e: number literal of %zu characters (at most %d)",
                          n, MAX_NUMBER_LITERAL);
                break;
            }
            char text[MAX_NUMBER_LITERAL + 1];
            memcpy(text, p->src + t.start, n);
            text[n] = '\0';
            double d = strtod(text, NULL);
            if (!isfinite(d)) {
                rc = fail(p->st, RT_EPROTO, "JSON-e: number literal %.32s... is too big", text);
                break;
            }
            value = make_number(d);
        } else if (t.kind == T_STRING) {
            value = json_stringn_nocheck(p->src + t.start + 1, t.end - t.start - 2);
        } else {
            value = t.kind == T_TRUE ? json_true() : t.kind == T_FALSE ? json_false() : json_null();
        }
        if (!value) {
            rc = no_memory(p->st);
            break;
        }
        if ((rc = new_node(p, N_LITERAL, 0, NULL, NULL, out))) {
            json_decref(value);
            break;
        }
        (*out)->value = value;
        rc = next_token(p, t.end);
        break;
    }
    case T_IDENT:
        if ((rc = new_node(p, N_CONTEXT, 0, NULL, NULL, out))) break;
        if (!((*out)->name = token_text(p, t.start, t.end))) {
            rc = no_memory(p->st);
            break;
        }
        rc = next_token(p, t.end);
        break;
    case T_LPAREN:
        if ((rc = next_token(p, t.end)) || (rc = parse_expression(p, 0, out))) break;
        rc = take(p, T_RPAREN);
        break;
    case T_LBRACKET:
    case T_LBRACE: rc = parse_list_or_object(p, out); break;
    default: rc = unexpected(p); break;
    }
    p->depth--;
    return rc;
}

/* access : unit ( . identifier | [ expr ] | ( args ) )* */
static int parse_access(parser *p, node **out)
{
    int rc = parse_unit(p, out);
    while (!rc && (p->cur.kind == T_DOT || p->cur.kind == T_LBRACKET || p->cur.kind == T_LPAREN)) {
        token t = p->cur;
        node *base = *out, *n = NULL;
        *out = NULL;
        if (t.kind == T_DOT) {
            if ((rc = next_token(p, t.end))) {
                node_free(base);
                break;
            }
            if (p->cur.kind != T_IDENT) {
                node_free(base);
                rc = unexpected(p);
                break;
            }
            if ((rc = new_node(p, N_DOT, T_DOT, base, NULL, &n))) {
                *out = n;
                break;
            }
            *out = n;
            if (!(n->name = token_text(p, p->cur.start, p->cur.end))) {
                rc = no_memory(p->st);
                break;
            }
            rc = next_token(p, p->cur.end);
        } else if (t.kind == T_LBRACKET) {
            node *index = NULL;
            if ((rc = next_token(p, t.end))) {
                node_free(base);
                break;
            }
            if (p->cur.kind == T_COLON || p->cur.kind == T_RBRACKET) {
                node_free(base);
                rc = p->cur.kind == T_COLON
                         ? fail(p->st, RT_EPROTO, "JSON-e: slices ([a:b]) are not supported")
                         : unexpected(p);
                break;
            }
            if ((rc = parse_expression(p, 0, &index))) {
                node_free(base);
                node_free(index);
                break;
            }
            if (p->cur.kind == T_COLON) {
                node_free(base);
                node_free(index);
                rc = fail(p->st, RT_EPROTO, "JSON-e: slices ([a:b]) are not supported");
                break;
            }
            rc = new_node(p, N_INDEX, T_LBRACKET, base, index, &n);
            *out = n;
            if (!rc) rc = take(p, T_RBRACKET);
        } else {
            /* A function call: parsed so that errors are about the call, refused when
             * evaluated (JSON-e's built-ins and context functions are not supported). */
            const char *callee = base->kind == N_CONTEXT ? base->name : "(expression)";
            char *name = strdup(callee);
            rc = new_node(p, N_CALL, T_LPAREN, base, NULL, &n);
            *out = n;
            if (rc) {
                free(name);
                break;
            }
            if (!(n->name = name)) {
                rc = no_memory(p->st);
                break;
            }
            if ((rc = next_token(p, t.end))) break;
            if (p->cur.kind != T_RPAREN) {
                for (;;) {
                    node *arg = NULL;
                    if ((rc = parse_expression(p, 0, &arg))) {
                        node_free(arg);
                        break;
                    }
                    if ((rc = push_item(p, n, arg, NULL))) break;
                    if (p->cur.kind != T_COMMA) break;
                    if ((rc = take(p, T_COMMA))) break;
                }
                if (rc) break;
            }
            rc = take(p, T_RPAREN);
        }
    }
    return rc;
}

static bool at_level(int level, int kind)
{
    switch (level) {
    case 0: return kind == T_OR;
    case 1: return kind == T_AND;
    case 2: return kind == T_IN;
    case 3: return kind == T_EQ || kind == T_NE;
    case 4: return kind == T_LT || kind == T_GT || kind == T_LE || kind == T_GE;
    case 5: return kind == T_PLUS || kind == T_MINUS;
    case 6: return kind == T_MUL || kind == T_DIV;
    default: return kind == T_POW;
    }
}

/* Precedence, loosest first: || && in (== !=) (< > <= >=) (+ -) (* /) ** (right-assoc). */
static int parse_expression(parser *p, int level, node **out)
{
    int rc;
    *out = NULL;
    if (++p->depth > MAX_PARSE_DEPTH)
        return fail(p->st, RT_ETOOBIG, "JSON-e: expression nested too deeply");
    if (level == 7) {
        rc = parse_access(p, out);
        if (!rc && p->cur.kind == T_POW) {
            node *right = NULL;
            if ((rc = next_token(p, p->cur.end)) || (rc = parse_expression(p, 7, &right))) {
                node_free(right);
            } else {
                node *left = *out;
                rc = new_node(p, N_BINARY, T_POW, left, right, out);
            }
        }
    } else {
        rc = parse_expression(p, level + 1, out);
        while (!rc && at_level(level, p->cur.kind)) {
            int op = p->cur.kind;
            node *right = NULL;
            if ((rc = next_token(p, p->cur.end)) || (rc = parse_expression(p, level + 1, &right))) {
                node_free(right);
                break;
            }
            node *left = *out;
            rc = new_node(p, N_BINARY, op, left, right, out);
        }
    }
    p->depth--;
    return rc;
}

/* ---- evaluation ---------------------------------------------------------------------------- */

static const char *const BUILTINS[] = {
    "abs",       "ceil",   "defined", "floor", "fromNow", "join",   "len",
    "lowercase", "lstrip", "max",     "min",   "now",     "number", "range",
    "rstrip",    "split",  "sqrt",    "str",   "strip",   "typeof", "uppercase",
};

static bool is_builtin(const char *name)
{
    for (size_t i = 0; i < sizeof BUILTINS / sizeof BUILTINS[0]; i++)
        if (strcmp(BUILTINS[i], name) == 0) return true;
    return false;
}

/* Byte offset of the code point at index `at` of a UTF-8 string, and its length. */
static void utf8_nth(const char *s, size_t len, size_t at, size_t *offset, size_t *size)
{
    size_t i = 0, n = 0;
    while (i < len) {
        size_t start = i++;
        while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
        if (n++ == at) {
            *offset = start;
            *size = i - start;
            return;
        }
    }
    *offset = len;
    *size = 0;
}

static size_t utf8_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) n++;
    return n;
}

static int evaluate(jstate *st, const json_t *ctx, const node *n, json_t **out);

/* Long because it is one case per infix operator of JSON-e (+, - * / **, < <= > >=, == !=, in),
 * each with the reference implementation's type checks and error messages; || and && come first,
 * as they evaluate their right side only when it decides the result. */
static int eval_binary(jstate *st, const json_t *ctx, const node *n, json_t **out)
{
    json_t *left = NULL, *right = NULL;
    int rc = evaluate(st, ctx, n->left, &left);
    if (rc) return rc;
    if (n->op == T_OR || n->op == T_AND) {
        bool value = is_truthy(left);
        if ((n->op == T_OR && !value) || (n->op == T_AND && value)) {
            if ((rc = evaluate(st, ctx, n->right, &right))) goto out;
            value = is_truthy(right);
        }
        *out = json_boolean(value);
        goto out;
    }
    if ((rc = evaluate(st, ctx, n->right, &right))) goto out;
    const char *op = TOKEN_NAMES[n->op];
    bool numbers = json_is_number(left) && json_is_number(right);
    bool strings = json_is_string(left) && json_is_string(right);
    double a = numbers ? json_number_value(left) : 0, b = numbers ? json_number_value(right) : 0;
    bool equal = false;
    switch (n->op) {
    case T_PLUS:
        if (strings) {
            buf text = {0};
            if (!(rc = buf_add(st, &text, json_string_value(left), json_string_length(left))) &&
                !(rc = buf_add(st, &text, json_string_value(right), json_string_length(right))))
                *out = json_stringn_nocheck(text.data ? text.data : "", text.len);
            free(text.data);
            if (rc) goto out;
            break;
        }
        if (!numbers) {
            rc = fail(st, RT_EPROTO, "JSON-e: infix: + expects numbers/strings + numbers/strings");
            goto out;
        }
        *out = make_number(a + b);
        break;
    case T_MINUS:
    case T_MUL:
    case T_DIV:
    case T_POW:
        if (!numbers) {
            rc = fail(st, RT_EPROTO, "JSON-e: infix: %s expects number %s number", op, op);
            goto out;
        }
        if (n->op == T_DIV && b == 0) {
            rc = fail(st, RT_EPROTO, "JSON-e: division by zero");
            goto out;
        }
        double r = n->op == T_MINUS ? a - b
                   : n->op == T_MUL ? a * b
                   : n->op == T_DIV ? a / b
                                    : pow(a, b);
        if (!isfinite(r)) {
            rc = fail(st, RT_EPROTO, "JSON-e: %s gave a number JSON cannot hold", op);
            goto out;
        }
        *out = make_number(r);
        break;
    case T_LT:
    case T_LE:
    case T_GT:
    case T_GE: {
        int cmp;
        if (numbers) {
            cmp = a < b ? -1 : a > b ? 1 : 0;
        } else if (strings) {
            size_t la = json_string_length(left), lb = json_string_length(right);
            if ((rc = spend(st, (long)(la / 64)))) goto out;
            cmp = memcmp(json_string_value(left), json_string_value(right), la < lb ? la : lb);
            if (cmp == 0) cmp = la < lb ? -1 : la > lb ? 1 : 0;
        } else {
            rc = fail(st, RT_EPROTO, "JSON-e: infix: %s expects numbers/strings %s numbers/strings",
                      op, op);
            goto out;
        }
        bool value = n->op == T_LT   ? cmp < 0
                     : n->op == T_LE ? cmp <= 0
                     : n->op == T_GT ? cmp > 0
                                     : cmp >= 0;
        *out = json_boolean(value);
        break;
    }
    case T_EQ:
    case T_NE:
        if ((rc = deep_equal(st, left, right, 0, &equal))) goto out;
        *out = json_boolean(n->op == T_EQ ? equal : !equal);
        break;
    case T_IN:
        if (json_is_object(right)) {
            if (!json_is_string(left)) {
                rc = fail(st, RT_EPROTO, "JSON-e: infix: in-object expects string on left side");
                goto out;
            }
            equal = json_object_get(right, json_string_value(left)) != NULL;
        } else if (json_is_string(right)) {
            if (!json_is_string(left)) {
                rc = fail(st, RT_EPROTO, "JSON-e: infix: in-string expects string on left side");
                goto out;
            }
            if ((rc = spend(st, (long)(json_string_length(right) / 16)))) goto out;
            equal = json_string_length(left) == 0 ||
                    memmem(json_string_value(right), json_string_length(right),
                           json_string_value(left), json_string_length(left)) != NULL;
        } else if (json_is_array(right)) {
            for (size_t i = 0; i < json_array_size(right) && !equal; i++)
                if ((rc = deep_equal(st, left, json_array_get(right, i), 0, &equal))) goto out;
        } else {
            rc = fail(st, RT_EPROTO,
                      "JSON-e: infix: in expects array, string, or object on right side");
            goto out;
        }
        *out = json_boolean(equal);
        break;
    default: rc = fail(st, RT_EPROTO, "JSON-e: operator %s is not supported", op); goto out;
    }
    if (!*out) rc = no_memory(st);
out:
    json_decref(left);
    json_decref(right);
    return rc;
}

static int eval_index(jstate *st, const json_t *ctx, const node *n, json_t **out)
{
    json_t *base = NULL, *index = NULL;
    int rc = evaluate(st, ctx, n->left, &base);
    if (rc || (rc = evaluate(st, ctx, n->right, &index))) goto out;
    if (json_is_array(base) || json_is_string(base)) {
        long long i;
        if (!integral_index(index, &i)) {
            rc =
                fail(st, RT_EPROTO, "JSON-e: should only use integers to access arrays or strings");
            goto out;
        }
        size_t len = json_is_array(base)
                         ? json_array_size(base)
                         : utf8_count(json_string_value(base), json_string_length(base));
        if (i < 0) i += (long long)len;
        if (i < 0 || (unsigned long long)i >= len) {
            rc = fail(st, RT_EPROTO, "JSON-e: index out of bounds");
            goto out;
        }
        if (json_is_array(base)) {
            *out = json_incref(json_array_get(base, (size_t)i));
        } else {
            size_t offset, size;
            utf8_nth(json_string_value(base), json_string_length(base), (size_t)i, &offset, &size);
            *out = json_stringn_nocheck(json_string_value(base) + offset, size);
            if (!*out) rc = no_memory(st);
        }
    } else if (json_is_object(base)) {
        if (!json_is_string(index)) {
            rc = fail(st, RT_EPROTO, "JSON-e: object keys must be strings");
            goto out;
        }
        json_t *value = json_object_get(base, json_string_value(index));
        *out = value ? json_incref(value) : json_null();
    } else {
        rc = fail(st, RT_EPROTO, "JSON-e: infix: \"[..]\" expects object, array, or string");
    }
out:
    json_decref(base);
    json_decref(index);
    return rc;
}

static int evaluate(jstate *st, const json_t *ctx, const node *n, json_t **out)
{
    int rc;
    *out = NULL;
    if ((rc = spend(st, 1))) return rc;
    switch (n->kind) {
    case N_LITERAL: *out = json_incref(n->value); return RT_OK;
    case N_CONTEXT: {
        json_t *value = json_object_get(ctx, n->name);
        if (value) {
            *out = json_incref(value);
            return RT_OK;
        }
        if (is_builtin(n->name))
            return fail(st, RT_EPROTO, "JSON-e: built-in '%s' is not supported", n->name);
        return fail(st, RT_EPROTO, "JSON-e: unknown context value %s", n->name);
    }
    case N_UNARY: {
        json_t *operand = NULL;
        if ((rc = evaluate(st, ctx, n->left, &operand))) return rc;
        if (n->op == T_NOT) {
            *out = json_boolean(!is_truthy(operand));
        } else if (!json_is_number(operand)) {
            rc = fail(st, RT_EPROTO, "JSON-e: unary %s expects number", TOKEN_NAMES[n->op]);
        } else if (n->op == T_MINUS) {
            *out = json_is_integer(operand) && json_integer_value(operand) != LLONG_MIN
                       ? json_integer(-json_integer_value(operand))
                       : make_number(-json_number_value(operand));
        } else {
            *out = json_incref(operand);
        }
        json_decref(operand);
        if (!rc && !*out) rc = no_memory(st);
        return rc;
    }
    case N_BINARY: return eval_binary(st, ctx, n, out);
    case N_DOT: {
        json_t *base = NULL;
        if ((rc = evaluate(st, ctx, n->left, &base))) return rc;
        if (!json_is_object(base)) {
            rc = fail(st, RT_EPROTO, "JSON-e: infix: . expects objects");
        } else {
            json_t *value = json_object_get(base, n->name);
            if (value)
                *out = json_incref(value);
            else
                rc = fail(st, RT_EPROTO, "JSON-e: object has no property \"%s\"", n->name);
        }
        json_decref(base);
        return rc;
    }
    case N_INDEX: return eval_index(st, ctx, n, out);
    case N_CALL:
        return fail(st, RT_EPROTO, "JSON-e: function calls are not supported (%s(...))", n->name);
    case N_LIST: {
        json_t *list = json_array();
        if (!list) return no_memory(st);
        for (size_t i = 0; i < n->count; i++) {
            json_t *item = NULL;
            if ((rc = evaluate(st, ctx, n->items[i], &item))) break;
            if (json_array_append_new(list, item)) {
                rc = no_memory(st);
                break;
            }
        }
        if (rc)
            json_decref(list);
        else
            *out = list;
        return rc;
    }
    case N_OBJECT: {
        json_t *object = json_object();
        if (!object) return no_memory(st);
        for (size_t i = 0; i < n->count; i++) {
            json_t *item = NULL;
            if ((rc = evaluate(st, ctx, n->items[i], &item))) break;
            if (json_object_set_new(object, n->keys[i], item)) {
                rc = fail(st, RT_EPROTO, "JSON-e: invalid object key in expression");
                break;
            }
        }
        if (rc)
            json_decref(object);
        else
            *out = object;
        return rc;
    }
    default: return fail(st, RT_EPROTO, "JSON-e: internal error");
    }
}

/* Parses src[0..len) as one expression. With terminator (interpolation) the expression
 * ends at a '}' token and *consumed is the offset just past it; without, the whole text
 * must be one expression. */
static int parse_and_evaluate(jstate *st, const json_t *ctx, const char *src, size_t len,
                              bool terminated, size_t *consumed, json_t **out)
{
    parser p = {.st = st, .src = src, .len = len};
    node *tree = NULL;
    *out = NULL;
    int rc = next_token(&p, 0);
    if (!rc) rc = parse_expression(&p, 0, &tree);
    if (!rc) {
        if (terminated && p.cur.kind == T_END)
            rc = fail(st, RT_EPROTO, "JSON-e: found end of string, expected }");
        else if (terminated ? p.cur.kind != T_RBRACE : p.cur.kind != T_END)
            rc = unexpected(&p);
    }
    if (!rc) rc = evaluate(st, ctx, tree, out);
    if (consumed) *consumed = p.cur.end;
    node_free(tree);
    return rc;
}

/* ---- rendering ---------------------------------------------------------------------------- */

static int interpolate(jstate *st, const json_t *ctx, const char *s, size_t len, json_t **out)
{
    buf text = {0};
    int rc = RT_OK;
    size_t done = 0, i = 0;
    *out = NULL;
    while (i < len) {
        if (s[i] == '$' && i + 2 < len && s[i + 1] == '$' && s[i + 2] == '{') {
            if ((rc = buf_add(st, &text, s + done, i - done)) || (rc = buf_add(st, &text, "${", 2)))
                goto out;
            i += 3;
            done = i;
        } else if (s[i] == '$' && i + 1 < len && s[i + 1] == '{') {
            if ((rc = buf_add(st, &text, s + done, i - done))) goto out;
            size_t consumed = 0;
            json_t *value = NULL;
            if ((rc = parse_and_evaluate(st, ctx, s + i + 2, len - i - 2, true, &consumed, &value)))
                goto out;
            char num[64];
            if (json_is_array(value) || json_is_object(value)) {
                rc = fail(st, RT_EPROTO,
                          "JSON-e: interpolation of '%.*s' produced an array or object",
                          (int)(consumed > 41 ? 40 : consumed - 1), s + i + 2);
            } else if (json_is_string(value)) {
                rc = buf_add(st, &text, json_string_value(value), json_string_length(value));
            } else if (json_is_number(value)) {
                format_number(value, num, sizeof num);
                rc = buf_adds(st, &text, num);
            } else if (json_is_boolean(value)) {
                rc = buf_adds(st, &text, json_is_true(value) ? "true" : "false");
            }
            json_decref(value);
            if (rc) goto out;
            i += 2 + consumed;
            done = i;
        } else {
            i++;
        }
    }
    if ((rc = buf_add(st, &text, s + done, len - done))) goto out;
    *out = json_stringn_nocheck(text.data ? text.data : "", text.len);
    if (!*out) rc = no_memory(st);
out:
    free(text.data);
    return rc;
}

static const char *const OPERATORS[] = {
    "$eval", "$flatten", "$flattenDeep", "$fromNow",   "$if",      "$json", "$let",
    "$map",  "$match",   "$merge",       "$mergeDeep", "$reverse", "$sort", "$switch",
};

static bool is_operator(const char *key)
{
    for (size_t i = 0; i < sizeof OPERATORS / sizeof OPERATORS[0]; i++)
        if (strcmp(OPERATORS[i], key) == 0) return true;
    return false;
}

/* ^\$[a-zA-Z][a-zA-Z0-9]*$ */
static bool is_reserved(const char *key)
{
    if (key[0] != '$' || !((key[1] >= 'a' && key[1] <= 'z') || (key[1] >= 'A' && key[1] <= 'Z')))
        return false;
    for (const char *c = key + 2; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
            return false;
    return true;
}

/* JSON-e's checkUndefinedProperties: only the operator's own keys are allowed. */
static int check_properties(jstate *st, const json_t *tpl, const char *op, const char *a,
                            const char *b)
{
    char extra[160] = "";
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)tpl, key, value)
    {
        if (strcmp(key, op) == 0 || (a && strcmp(key, a) == 0) || (b && strcmp(key, b) == 0))
            continue;
        size_t used = strlen(extra);
        snprintf(extra + used, sizeof extra - used, " %s", key);
    }
    if (extra[0]) return fail(st, RT_EPROTO, "JSON-e: %s has undefined properties:%s", op, extra);
    return RT_OK;
}

static int render(jstate *st, const json_t *tpl, const json_t *ctx, int depth, json_t **out);

static int render_operator(jstate *st, const char *op, const json_t *tpl, const json_t *ctx,
                           int depth, json_t **out)
{
    int rc;
    json_t *arg = json_object_get(tpl, op);
    if (strcmp(op, "$eval") == 0) {
        if ((rc = check_properties(st, tpl, op, NULL, NULL))) return rc;
        if (!json_is_string(arg))
            return fail(st, RT_EPROTO, "JSON-e: $eval must be given a string expression");
        return parse_and_evaluate(st, ctx, json_string_value(arg), json_string_length(arg), false,
                                  NULL, out);
    }
    if (strcmp(op, "$if") == 0) {
        if ((rc = check_properties(st, tpl, op, "then", "else"))) return rc;
        if (!json_is_string(arg))
            return fail(st, RT_EPROTO, "JSON-e: $if can evaluate string expressions only");
        json_t *cond = NULL;
        if ((rc = parse_and_evaluate(st, ctx, json_string_value(arg), json_string_length(arg),
                                     false, NULL, &cond)))
            return rc;
        json_t *branch = json_object_get(tpl, is_truthy(cond) ? "then" : "else");
        json_decref(cond);
        return branch ? render(st, branch, ctx, depth + 1, out) : RT_OK; /* NULL: deleted */
    }
    if (strcmp(op, "$json") == 0) {
        if ((rc = check_properties(st, tpl, op, NULL, NULL))) return rc;
        json_t *value = NULL;
        if ((rc = render(st, arg, ctx, depth + 1, &value))) return rc;
        if (!value) return fail(st, RT_EPROTO, "JSON-e: $json value rendered to nothing");
        buf text = {0};
        rc = stringify(st, &text, value, 0);
        json_decref(value);
        if (!rc && !(*out = json_stringn_nocheck(text.data ? text.data : "", text.len)))
            rc = no_memory(st);
        free(text.data);
        return rc;
    }
    if (strcmp(op, "$let") == 0) {
        if ((rc = check_properties(st, tpl, op, "in", NULL))) return rc;
        if (!json_is_object(arg))
            return fail(st, RT_EPROTO, "JSON-e: $let value must be an object");
        json_t *in = json_object_get(tpl, "in");
        if (!in) return fail(st, RT_EPROTO, "JSON-e: $let operator requires an `in` clause");
        json_t *vars = NULL, *child = NULL;
        if ((rc = render(st, arg, ctx, depth + 1, &vars))) return rc;
        if (!json_is_object(vars)) {
            rc = fail(st, RT_EPROTO, "JSON-e: $let value must be an object");
            goto let_out;
        }
        const char *key;
        json_t *value;
        json_object_foreach(vars, key, value)
        {
            if (!is_identifier(key)) {
                rc = fail(st, RT_EPROTO,
                          "JSON-e: top level keys of $let must follow /[a-zA-Z_][a-zA-Z0-9_]*/");
                goto let_out;
            }
        }
        if ((rc = spend(st, (long)json_object_size(ctx)))) goto let_out;
        if (!(child = json_copy((json_t *)ctx)) || json_object_update(child, vars)) {
            rc = no_memory(st);
            goto let_out;
        }
        rc = render(st, in, child, depth + 1, out);
    let_out:
        json_decref(vars);
        json_decref(child);
        return rc;
    }
    return fail(st, RT_EPROTO, "JSON-e: operator %s is not supported", op);
}

static int render_object(jstate *st, const json_t *tpl, const json_t *ctx, int depth, json_t **out)
{
    int rc = RT_OK;
    const char *key, *op = NULL;
    json_t *value;
    int operators = 0;
    json_object_foreach((json_t *)tpl, key, value)
    {
        if (is_operator(key)) {
            operators++;
            op = key;
        }
    }
    if (operators > 1) return fail(st, RT_EPROTO, "JSON-e: only one operator allowed");
    if (op) return render_operator(st, op, tpl, ctx, depth, out);

    json_t *result = json_object();
    if (!result) return no_memory(st);
    json_object_foreach((json_t *)tpl, key, value)
    {
        json_t *item = NULL, *name = NULL;
        if ((rc = render(st, value, ctx, depth + 1, &item))) break;
        if (!item) continue; /* deleted */
        if (key[0] == '$' && key[1] == '$') {
            name = json_string_nocheck(key + 1);
        } else if (is_reserved(key)) {
            json_decref(item);
            rc = fail(st, RT_EPROTO, "JSON-e: $<identifier> is reserved; use $$<identifier> (%s)",
                      key);
            break;
        } else if ((rc = interpolate(st, ctx, key, strlen(key), &name))) {
            json_decref(item);
            break;
        }
        if (!name) {
            json_decref(item);
            rc = no_memory(st);
            break;
        }
        if (json_object_setn_new_nocheck(result, json_string_value(name), json_string_length(name),
                                         item))
            rc = no_memory(st);
        json_decref(name);
        if (rc) break;
    }
    if (rc)
        json_decref(result);
    else
        *out = result;
    return rc;
}

/* *out NULL with RT_OK: the value deleted itself ($if without the branch taken). */
static int render(jstate *st, const json_t *tpl, const json_t *ctx, int depth, json_t **out)
{
    int rc;
    *out = NULL;
    if ((rc = spend(st, 1))) return rc;
    if (depth > RT_JSONE_MAX_DEPTH)
        return fail(st, RT_ETOOBIG, "JSON-e: template nested deeper than %d", RT_JSONE_MAX_DEPTH);
    switch (json_typeof(tpl)) {
    case JSON_STRING:
        return interpolate(st, ctx, json_string_value(tpl), json_string_length(tpl), out);
    case JSON_ARRAY: {
        json_t *list = json_array();
        if (!list) return no_memory(st);
        for (size_t i = 0; i < json_array_size(tpl); i++) {
            json_t *item = NULL;
            if ((rc = render(st, json_array_get(tpl, i), ctx, depth + 1, &item))) break;
            if (item && json_array_append_new(list, item)) {
                rc = no_memory(st);
                break;
            }
        }
        if (rc)
            json_decref(list);
        else
            *out = list;
        return rc;
    }
    case JSON_OBJECT: return render_object(st, tpl, ctx, depth, out);
    default: *out = json_incref((json_t *)tpl); return RT_OK;
    }
}

typedef struct tally {
    size_t values, bytes;
} tally;

/* Counts the values and string bytes of v, shared parts each time they appear; returns
 * false as soon as a limit is passed. */
static bool tally_values(const json_t *v, tally *t, int depth)
{
    if (depth > RT_JSONE_MAX_DEPTH || ++t->values > RT_JSONE_MAX_NODES) return false;
    if (json_is_string(v)) {
        t->bytes += json_string_length(v);
        return t->bytes <= RT_JSONE_MAX_TEXT;
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (!tally_values(json_array_get(v, i), t, depth + 1)) return false;
    } else if (json_is_object(v)) {
        const char *key;
        json_t *item;
        json_object_foreach((json_t *)v, key, item)
        {
            t->bytes += strlen(key);
            if (!tally_values(item, t, depth + 1)) return false;
        }
    }
    return t->bytes <= RT_JSONE_MAX_TEXT;
}

int rt_jsone_render(const json_t *template, const json_t *context, json_t **out, char *errstr)
{
    jstate st = {
        .errstr = errstr, .steps_left = RT_JSONE_MAX_STEPS, .bytes_left = RT_JSONE_MAX_TEXT};
    json_t *empty = NULL, *result = NULL;
    int rc = RT_OK;
    *out = NULL;
    if (errstr) errstr[0] = '\0';
    if (!template) return fail(&st, RT_EINVAL, "JSON-e: no template");
    if (!context) {
        if (!(context = empty = json_object())) return no_memory(&st);
    }
    if (!json_is_object(context)) {
        rc = fail(&st, RT_EINVAL, "JSON-e: context must be an object");
        goto out;
    }
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)context, key, value)
    {
        if (!is_identifier(key)) {
            rc = fail(
                &st, RT_EPROTO,
                "JSON-e: top level keys of context must follow /[a-zA-Z_][a-zA-Z0-9_]*/ (%.40s)",
                key);
            goto out;
        }
    }
    if ((rc = render(&st, template, context, 0, &result))) goto out;
    if (!result && !(result = json_null())) {
        rc = no_memory(&st);
        goto out;
    }
    /* The result may share values with the context and with itself ([a, a]): bound its
     * expanded size, then copy it so the caller owns all of it. */
    tally size = {0};
    if (!tally_values(result, &size, 0)) {
        rc = fail(&st, RT_ETOOBIG, "JSON-e: result is over %d values, %d bytes or %d levels",
                  RT_JSONE_MAX_NODES, RT_JSONE_MAX_TEXT, RT_JSONE_MAX_DEPTH);
        goto out;
    }
    if (!(*out = json_deep_copy(result))) rc = no_memory(&st);
out:
    json_decref(result);
    json_decref(empty);
    return rc;
}
