/* SPDX-License-Identifier: MPL-2.0 */
/* curl_body.h - what both libcurl clients (http.c, github_client.c) do with what a server
 * sends: a body gathered into one NUL-terminated buffer under a size cap, and a header
 * line's value. Untrusted input: the cap is checked before anything is copied, a header
 * value is cut at the line's end and never read past it. Not thread-safe per buffer. */
#ifndef RETRIG_COMMON_IO_CURL_BODY_H
#define RETRIG_COMMON_IO_CURL_BODY_H

#include <stdbool.h>
#include <stddef.h>

/* A body being received: body[len] is always '\0' once anything was appended. */
typedef struct rt_curl_body {
    char **body;
    size_t *len;
    size_t cap;   /* bytes allocated at *body (0: none yet) */
    size_t first; /* the first allocation (the buffer doubles from there) */
    long max;     /* the most bytes the body may have */
    bool too_big; /* a chunk would have taken it past max */
    bool oom;     /* realloc failed */
} rt_curl_body;

/* Appends n bytes (a libcurl write callback's chunk): n, or 0 (which aborts the transfer
 * with CURLE_WRITE_ERROR) when the body would pass max (too_big) or memory ran out (oom). */
size_t rt_curl_body_append(rt_curl_body *b, const char *data, size_t n);

/* The value of header line "Name: value\r\n" (len bytes, not NUL-terminated) when it is
 * named name (case-insensitive), trimmed of blanks and the line end (malloc'd); else NULL. */
char *rt_curl_header_value(const char *line, size_t len, const char *name);

#endif
