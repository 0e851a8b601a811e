/* SPDX-License-Identifier: MPL-2.0 */
/* log.c - JSON-lines logger with URL-password and registered-secret redaction. */
#include "common/io/log.h"

#include "common/core/errors.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define RT_LOG_MAX_SECRETS 16
#define RT_LOG_LINE_MAX    8192

static struct {
    char program[64];
    rt_log_level level;
    FILE *out;
    char *secrets[RT_LOG_MAX_SECRETS];
    size_t nsecrets;
    pthread_mutex_t lock;
} g_log = {"retrig", RT_LOG_INFO, NULL, {0}, 0, PTHREAD_MUTEX_INITIALIZER};

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void rt_log_init(const char *program)
{
    snprintf(g_log.program, sizeof g_log.program, "%s", program ? program : "retrig");
}

void rt_log_set_level(rt_log_level level) { g_log.level = level; }
rt_log_level rt_log_get_level(void) { return g_log.level; }
bool rt_log_enabled(rt_log_level level) { return level >= g_log.level; }
void rt_log_set_output(FILE *out) { g_log.out = out; }

int rt_log_parse_level(const char *name, rt_log_level *level)
{
    if (!name) return RT_EINVAL;
    if (!strcmp(name, "debug"))
        *level = RT_LOG_DEBUG;
    else if (!strcmp(name, "info"))
        *level = RT_LOG_INFO;
    else if (!strcmp(name, "warn") || !strcmp(name, "warning"))
        *level = RT_LOG_WARN;
    else if (!strcmp(name, "error"))
        *level = RT_LOG_ERROR;
    else
        return RT_EINVAL;
    return 0;
}

void rt_log_add_secret(const char *secret)
{
    if (!secret || strlen(secret) < 4) return;
    pthread_mutex_lock(&g_log.lock);
    for (size_t i = 0; i < g_log.nsecrets; i++) {
        if (!strcmp(g_log.secrets[i], secret)) goto out;
    }
    if (g_log.nsecrets < RT_LOG_MAX_SECRETS) {
        char *copy = strdup(secret);
        if (copy) g_log.secrets[g_log.nsecrets++] = copy;
    }
out:
    pthread_mutex_unlock(&g_log.lock);
}

void rt_log_clear_secrets(void)
{
    pthread_mutex_lock(&g_log.lock);
    for (size_t i = 0; i < g_log.nsecrets; i++) free(g_log.secrets[i]);
    g_log.nsecrets = 0;
    pthread_mutex_unlock(&g_log.lock);
}

/* Length of the URL password starting at p (just after "user:") or 0 when the text at
 * p is not the password part of scheme://user:password@host. */
static size_t url_password_length(const char *start, const char *p)
{
    /* Walk back over the user name to find "://". */
    const char *u = p - 1; /* the ':' */
    while (u > start && u[-1] != '/' && u[-1] != ' ' && u[-1] != '"' && u[-1] != '@' &&
           u[-1] != ':')
        u--;
    if (u - start < 3 || strncmp(u - 3, "://", 3) != 0) return 0;
    size_t n = 0;
    while (p[n] && p[n] != '@' && p[n] != '/' && p[n] != ' ' && p[n] != '"' && p[n] != '\n') n++;
    return p[n] == '@' ? n : 0;
}

static size_t redact_locked(const char *in, char *out, size_t size)
{
    size_t o = 0;
    if (size == 0) return 0;
    for (const char *p = in; *p && o + 1 < size;) {
        if (p > in && p[-1] == ':') {
            size_t pw = url_password_length(in, p);
            if (pw > 0) {
                for (const char *r = "***"; *r && o + 1 < size; r++) out[o++] = *r;
                p += pw;
                continue;
            }
        }
        size_t matched = 0;
        for (size_t i = 0; i < g_log.nsecrets; i++) {
            size_t len = strlen(g_log.secrets[i]);
            if (!strncmp(p, g_log.secrets[i], len)) {
                matched = len;
                break;
            }
        }
        if (matched) {
            for (const char *r = "***"; *r && o + 1 < size; r++) out[o++] = *r;
            p += matched;
            continue;
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
    return o;
}

size_t rt_redact(const char *in, char *out, size_t size)
{
    pthread_mutex_lock(&g_log.lock);
    size_t n = redact_locked(in ? in : "", out, size);
    pthread_mutex_unlock(&g_log.lock);
    return n;
}

char *rt_redact_dup(const char *in)
{
    /* A redacted part may be shorter than "***", so leave room for growth. */
    size_t size = 3 * strlen(in ? in : "") + 4;
    char *out = malloc(size);
    if (out) rt_redact(in, out, size);
    return out;
}

/* Appends s as a JSON string (with quotes) to buf; invalid UTF-8 bytes become U+FFFD. */
static void append_json_string(char *buf, size_t *len, size_t cap, const char *s)
{
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (*len + 1 < cap) buf[(*len)++] = (c);                                                   \
    } while (0)
    PUT('"');
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            PUT('\\');
            PUT((char)c);
            p++;
        } else if (c == '\n') {
            PUT('\\');
            PUT('n');
            p++;
        } else if (c == '\r') {
            PUT('\\');
            PUT('r');
            p++;
        } else if (c == '\t') {
            PUT('\\');
            PUT('t');
            p++;
        } else if (c < 0x20 || c == 0x7f) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            for (char *e = esc; *e; e++) PUT(*e);
            p++;
        } else if (c < 0x80) {
            PUT((char)c);
            p++;
        } else {
            size_t n = (c >= 0xf0 && c <= 0xf4)   ? 4
                       : (c >= 0xe0)              ? 3
                       : (c >= 0xc2 && c <= 0xdf) ? 2
                                                  : 0;
            bool ok = n > 0 && c < 0xf5;
            for (size_t i = 1; ok && i < n; i++) ok = (p[i] & 0xc0) == 0x80;
            if (ok) {
                for (size_t i = 0; i < n; i++) PUT((char)p[i]);
                p += n;
            } else {
                PUT('\\');
                PUT('u');
                PUT('f');
                PUT('f');
                PUT('f');
                PUT('d');
                p++;
            }
        }
    }
    PUT('"');
#undef PUT
}

void rt_log_write(rt_log_level level, const char *msg, ...)
{
    char line[RT_LOG_LINE_MAX];
    size_t len = 0;
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    len = (size_t)snprintf(
        line, sizeof line,
        "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\",\"level\":\"%s\",\"prog\":",
        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
        (int)(tv.tv_usec / 1000), level_names[level & 3]);
    append_json_string(line, &len, sizeof line - 4, g_log.program);
    const char *k = ",\"msg\":";
    while (*k && len + 1 < sizeof line - 4) line[len++] = *k++;
    append_json_string(line, &len, sizeof line - 4, msg ? msg : "");

    va_list ap;
    va_start(ap, msg);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (!key) break;
        const char *value = va_arg(ap, const char *);
        if (len + 2 < sizeof line - 4) line[len++] = ',';
        append_json_string(line, &len, sizeof line - 4, key);
        if (len + 2 < sizeof line - 4) line[len++] = ':';
        if (value)
            append_json_string(line, &len, sizeof line - 4, value);
        else
            for (const char *n = "null"; *n && len + 1 < sizeof line - 4; n++) line[len++] = *n;
    }
    va_end(ap);
    line[len++] = '}';
    line[len] = '\0';

    char clean[RT_LOG_LINE_MAX];
    pthread_mutex_lock(&g_log.lock);
    redact_locked(line, clean, sizeof clean - 1);
    FILE *out = g_log.out ? g_log.out : stderr;
    fputs(clean, out);
    fputc('\n', out);
    fflush(out);
    pthread_mutex_unlock(&g_log.lock);
}
