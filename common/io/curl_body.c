/* SPDX-License-Identifier: MPL-2.0 */
/* curl_body.c - a response body under a cap, and header values (curl_body.h). */
#include "common/io/curl_body.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t rt_curl_body_append(rt_curl_body *b, const char *data, size_t n)
{
    size_t len = *b->len;
    if (len + n > (size_t)b->max) {
        b->too_big = true;
        return 0;
    }
    if (len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : b->first ? b->first : 256;
        while (cap < len + n + 1) cap *= 2;
        char *grown = realloc(*b->body, cap);
        if (!grown) {
            b->oom = true;
            return 0;
        }
        *b->body = grown;
        b->cap = cap;
    }
    memcpy(*b->body + len, data, n);
    *b->len = len + n;
    (*b->body)[len + n] = '\0';
    return n;
}

char *rt_curl_header_value(const char *line, size_t len, const char *name)
{
    size_t nlen = strlen(name);
    if (len <= nlen || line[nlen] != ':' || strncasecmp(line, name, nlen) != 0) return NULL;
    const char *v = line + nlen + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    return strndup(v, (size_t)(end - v));
}
