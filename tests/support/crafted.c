/* SPDX-License-Identifier: MPL-2.0 */
/* crafted.c - expensive errorsummary artifacts, and a real one of the same size. */
#include "support/crafted.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/errorsummary.h"
#include "support/util.h"

typedef struct text {
    char *p;
    size_t n, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (t->n + n + 1 > cap) cap *= 2;
        char *grown = realloc(t->p, cap);
        if (!grown) fail_msg("out of memory");
        t->p = grown;
        t->cap = cap;
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
    t->p[t->n] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

/* A group name of `size` bytes: a common prefix of 'g', then the number i. */
static void name_of(char *out, size_t size, size_t i)
{
    char tail[32];
    int n = snprintf(tail, sizeof tail, "/%zu.ini", i);
    memset(out, 'g', size - (size_t)n);
    memcpy(out + size - (size_t)n, tail, (size_t)n);
    out[size] = '\0';
}

const char *rt_crafted_name(rt_crafted_kind kind)
{
    switch (kind) {
    case RT_CRAFTED_REAL: return "real";
    case RT_CRAFTED_LONG_NAMES: return "long-names";
    case RT_CRAFTED_MANY_GROUPS: return "many-groups";
    case RT_CRAFTED_LOOKUPS: return "lookups";
    }
    return "?";
}

char *rt_crafted_errorsummary(rt_crafted_kind kind, size_t bytes, size_t *len)
{
    text t = {0};
    static char name[RT_ES_MAX_FIELD + 1];
    if (kind == RT_CRAFTED_REAL) {
        size_t n = 0;
        char *real = rt_test_read_file(
            rt_test_fixture("errorsummary/mochitest-browser-chrome_errorsummary.log"), &n);
        while (t.n < bytes) put(&t, real, n);
        free(real);
    } else if (kind == RT_CRAFTED_LONG_NAMES) {
        /* Distinct long names up to the cap, four a line; then the same names again. */
        for (size_t i = 0; t.n < bytes; i += 4) {
            puts_(&t, "{\"action\":\"test_groups\",\"groups\":[");
            for (size_t k = 0; k < 4; k++) {
                name_of(name, RT_ES_MAX_FIELD, (i + k) % RT_ES_MAX_GROUPS);
                puts_(&t, k ? ",\"" : "\"");
                puts_(&t, name);
                puts_(&t, "\"");
            }
            puts_(&t, "]}\n");
        }
    } else if (kind == RT_CRAFTED_MANY_GROUPS) {
        char line[RT_ES_MAX_FIELD + 512];
        puts_(&t, "{\"action\":\"test_groups\",\"groups\":[");
        for (size_t i = 0; i < RT_ES_MAX_GROUPS && t.n < bytes; i++) {
            name_of(name, 200, i);
            puts_(&t, i ? ",\"" : "\"");
            puts_(&t, name);
            puts_(&t, "\"");
        }
        puts_(&t, "]}\n");
        for (size_t i = 0; t.n < bytes; i++) {
            name_of(name, 200, (i * 7919) % RT_ES_MAX_GROUPS);
            snprintf(line, sizeof line,
                     "{\"action\":\"group_result\",\"group\":\"%s\",\"status\":\"OK\"}\n", name);
            puts_(&t, line);
        }
    } else {
        /* Every group there may be, then results naming the last one (a look-up each: a
         * scan of every group before the index). */
        for (size_t i = 0; i < RT_ES_MAX_GROUPS; i++) { /* 500 a line (the line cap) */
            if (i % 500 == 0)
                puts_(&t, i ? "]}\n{\"action\":\"test_groups\",\"groups\":[\""
                            : "{\"action\":\"test_groups\",\"groups\":[\"");
            else
                puts_(&t, ",\"");
            name_of(name, 256, i);
            puts_(&t, name);
            puts_(&t, "\"");
        }
        puts_(&t, "]}\n");
        name_of(name, 256, RT_ES_MAX_GROUPS - 1);
        char line[RT_ES_MAX_FIELD + 512];
        for (size_t i = 0; t.n < bytes; i++) {
            snprintf(line, sizeof line,
                     "{\"action\":\"test_result\",\"test\":\"t%zu.js\",\"status\":\"FAIL\","
                     "\"expected\":\"PASS\",\"group\":\"%s\"}\n",
                     i, name);
            puts_(&t, line);
        }
    }
    *len = t.n;
    return t.p;
}
