/* SPDX-License-Identifier: MPL-2.0 */
/* utf8.h - cutting and checking UTF-8 text without splitting a character.
 *
 * Text from outside (errorsummary fields, Treeherder lines, reasons) is cut to fixed sizes
 * in many places; a byte cut can end in half a character, which jansson then refuses
 * (json_pack returns NULL, the item disappears) and Postgres refuses (invalid byte
 * sequence). Every cut goes through these functions: they step back to the start of the
 * character the cut would split. Invalid input is not this module's business except where
 * a function says so (rt_utf8_sanitize replaces it with U+FFFD). Pure and thread-safe. */
#ifndef RETRIG_COMMON_CORE_UTF8_H
#define RETRIG_COMMON_CORE_UTF8_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* The largest n <= max (and <= len) such that s[0..n) does not end inside a character
 * (a lead byte whose continuation bytes would be cut off is dropped). */
size_t rt_utf8_boundary(const char *s, size_t len, size_t max);
/* Copies src into dst (size bytes, NUL-terminated), cut at a character boundary. Returns
 * the bytes copied; *cut (may be NULL) says whether src was longer. */
size_t rt_utf8_copy(char *dst, size_t size, const char *src, bool *cut);
/* vsnprintf into dst, the result cut at a character boundary when it does not fit. */
void rt_utf8_vformat(char *dst, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* The same with arguments. */
void rt_utf8_format(char *dst, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Whether s[0..len) is well-formed UTF-8 (no overlongs, surrogates or code points past
 * U+10FFFF). */
bool rt_utf8_valid(const char *s, size_t len);
/* A malloc'd, NUL-terminated copy of s[0..len) in which every ill-formed byte sequence (and
 * NUL) is replaced by U+FFFD; NULL when out of memory. */
char *rt_utf8_sanitize(const char *s, size_t len);
/* s made safe to print on a terminal (a malloc'd copy; NULL when out of memory): C0
 * control characters (ESC among them) and DEL become \n, \r, \t or \xNN, C1 controls
 * (U+0080-U+009F: U+009B is a CSI) and the bidirectional overrides and isolates (U+202A-
 * U+202E, U+2066-U+2069, which reorder what follows) become \uNNNN, and ill-formed bytes
 * \xNN. Everything else, backslashes included, is kept. Every human-readable output of
 * stored or upstream text goes through it. */
char *rt_utf8_printable(const char *s);

#endif
