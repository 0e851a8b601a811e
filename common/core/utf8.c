/* SPDX-License-Identifier: MPL-2.0 */
/* utf8.c - UTF-8 boundaries, validation and repair. */
#include "common/core/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the well-formed sequence at p (at most n bytes available), or 0 when ill-formed
 * (Unicode's table of well-formed byte sequences). */
static size_t sequence_length(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c == 0xe0)
        len = 3, lo = 0xa0;
    else if (c == 0xed)
        len = 3, hi = 0x9f;
    else if (c >= 0xe1 && c <= 0xef)
        len = 3;
    else if (c == 0xf0)
        len = 4, lo = 0x90;
    else if (c == 0xf4)
        len = 4, hi = 0x8f;
    else if (c >= 0xf1 && c <= 0xf3)
        len = 4;
    else
        return 0;
    if (n < len) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    return len;
}

size_t rt_utf8_boundary(const char *s, size_t len, size_t max)
{
    if (max >= len) return len;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = max;
    /* Step back over continuation bytes to the lead byte of the character at the cut. */
    size_t back = 0;
    while (n > 0 && back < 3 && (p[n] & 0xc0) == 0x80) n--, back++;
    /* p[n] starts the character the cut falls into (or the cut was at a boundary). */
    return back ? n : max;
}

size_t rt_utf8_copy(char *dst, size_t size, const char *src, bool *cut)
{
    if (!size) return 0;
    size_t len = strlen(src);
    size_t n = rt_utf8_boundary(src, len, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
    if (cut) *cut = n < len;
    return n;
}

void rt_utf8_vformat(char *dst, size_t size, const char *fmt, va_list ap)
{
    if (!size) return;
    int full = vsnprintf(dst, size, fmt, ap);
    if (full < 0) {
        dst[0] = '\0';
        return;
    }
    if ((size_t)full >= size) {
        /* vsnprintf cut at size - 1 bytes; the byte after the cut is gone, so judge the
         * last character by its own length. */
        size_t n = size - 1, start = n;
        while (start > 0 && ((unsigned char)dst[start - 1] & 0xc0) == 0x80 && n - start < 3)
            start--;
        if (start > 0 && (unsigned char)dst[start - 1] >= 0xc0) {
            size_t lead = start - 1;
            if (sequence_length((const unsigned char *)dst + lead, n - lead) == 0) n = lead;
        }
        dst[n] = '\0';
    }
}

void rt_utf8_format(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rt_utf8_vformat(dst, size, fmt, ap);
    va_end(ap);
}

bool rt_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = sequence_length(p + i, len - i);
        if (!n) return false;
        i += n;
    }
    return true;
}

char *rt_utf8_sanitize(const char *s, size_t len)
{
    if (len > ((size_t)-1 - 1) / 3) return NULL;
    char *out = malloc(len * 3 + 1); /* each bad byte may grow to 3 */
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t n = p[i] ? sequence_length(p + i, len - i) : 0;
        if (n) {
            memcpy(out + o, p + i, n);
            o += n;
            i += n;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    out[o] = '\0';
    return out;
}

char *rt_utf8_printable(const char *s)
{
    size_t len = strlen(s);
    if (len > ((size_t)-1 - 1) / 6) return NULL;
    char *out = malloc(len * 6 + 1); /* a 1-byte control grows to 4, a 2-byte C1 to 6 */
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        size_t n = sequence_length(p + i, len - i);
        unsigned cp = 0;
        if (n == 2) cp = ((c & 0x1fu) << 6) | (p[i + 1] & 0x3fu);
        if (n == 3) cp = ((c & 0x0fu) << 12) | ((p[i + 1] & 0x3fu) << 6) | (p[i + 2] & 0x3fu);
        if (c == '\n' || c == '\r' || c == '\t') {
            out[o++] = '\\';
            out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
            i++;
        } else if (c < 0x20 || c == 0x7f || n == 0) {
            o += (size_t)sprintf(out + o, "\\x%02x", c);
            i++;
        } else if ((n == 2 && cp <= 0x9f) ||
                   (n == 3 && ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)))) {
            o += (size_t)sprintf(out + o, "\\u%04x", cp);
            i += n;
        } else {
            memcpy(out + o, p + i, n);
            o += n;
            i += n;
        }
    }
    out[o] = '\0';
    return out;
}
