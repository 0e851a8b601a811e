/* SPDX-License-Identifier: MPL-2.0 */
/* log.h - one line per event on stderr, with levels and secret redaction.
 *
 * Two formats. JSON (for workers and for logs machines collect): every line is
 * {"ts","level","prog","msg", then the caller's key/value fields}. Text (for a person at a
 * terminal, as git or psql print): "<prog>: <msg>: <error> (key=value, ...)", with
 * "warning: " before a warning's message and a "hint" field on a line of its own; control
 * characters are escaped. The default (auto) is text when the output is a terminal, JSON
 * otherwise; log_format or --log-format chooses.
 * Registered secrets (rt_log_add_secret) and the password part of any URL
 * (scheme://user:PASSWORD@host) are replaced by "***" in the message and in every key and
 * value, on the raw text before it is escaped or cut, so a secret that reaches a message or
 * a field by accident is never printed, not even in part or with a quote in it. A line is
 * at most 8 KB: a value that does not fit is cut after a whole character or escape, the
 * fields after it are left out, and the line, still one valid JSON object, ends with
 * "truncated":true.
 * Levels are checked before arguments are formatted (the macros below).
 * Thread-safety: configure (init, level, secrets) before starting threads; writing is
 * serialised by a mutex. */
#ifndef RETRIG_COMMON_LOG_H
#define RETRIG_COMMON_LOG_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum { RT_LOG_DEBUG = 0, RT_LOG_INFO = 1, RT_LOG_WARN = 2, RT_LOG_ERROR = 3 } rt_log_level;
typedef enum { RT_LOG_AUTO = 0, RT_LOG_JSON = 1, RT_LOG_TEXT = 2 } rt_log_format;

void rt_log_init(const char *program);
void rt_log_set_level(rt_log_level level);
rt_log_level rt_log_get_level(void);
/* "debug", "info", "warn"/"warning", "error" -> 0; anything else RT_EINVAL. */
int rt_log_parse_level(const char *name, rt_log_level *level);
bool rt_log_enabled(rt_log_level level);
/* Remembers a secret so that it is never printed; strings shorter than 4 bytes are
 * ignored (they would redact ordinary words). Copies the string. */
void rt_log_add_secret(const char *secret);
void rt_log_clear_secrets(void);
/* Where lines go (default stderr); for tests. */
void rt_log_set_output(FILE *out);
/* The format (RT_LOG_AUTO: text when the output is a terminal, else JSON). */
void rt_log_set_format(rt_log_format format);
/* "auto", "json", "text" -> 0; anything else RT_EINVAL. */
int rt_log_parse_format(const char *name, rt_log_format *format);

/* Writes one line. The variadic part is key, value string pairs ended by NULL;
 * a NULL value is written as JSON null. Use the macros. */
void rt_log_write(rt_log_level level, const char *msg, ...);

#define rt_log_debug(...)                                                                          \
    do {                                                                                           \
        if (rt_log_enabled(RT_LOG_DEBUG)) rt_log_write(RT_LOG_DEBUG, __VA_ARGS__, (char *)NULL);   \
    } while (0)
#define rt_log_info(...)                                                                           \
    do {                                                                                           \
        if (rt_log_enabled(RT_LOG_INFO)) rt_log_write(RT_LOG_INFO, __VA_ARGS__, (char *)NULL);     \
    } while (0)
#define rt_log_warn(...)                                                                           \
    do {                                                                                           \
        if (rt_log_enabled(RT_LOG_WARN)) rt_log_write(RT_LOG_WARN, __VA_ARGS__, (char *)NULL);     \
    } while (0)
#define rt_log_error(...)                                                                          \
    do {                                                                                           \
        if (rt_log_enabled(RT_LOG_ERROR)) rt_log_write(RT_LOG_ERROR, __VA_ARGS__, (char *)NULL);   \
    } while (0)

/* Copies in to out (size bytes, always NUL-terminated), redacting URL passwords and
 * registered secrets. Returns the length written. Use it for any text that leaves the
 * process other than through rt_log (stdout of the CLI, error messages in replies). */
size_t rt_redact(const char *in, char *out, size_t size);
/* Same, into a new malloc'd string (NULL on allocation failure). */
char *rt_redact_dup(const char *in);

#endif
