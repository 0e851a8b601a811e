/* SPDX-License-Identifier: MPL-2.0 */
/* log.c - JSON-lines logger with URL-password and registered-secret redaction. */
#include "common/io/log.h"

#include "common/core/errors.h"
#include "common/core/utf8.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define RT_LOG_MAX_SECRETS 16
#define RT_LOG_LINE_MAX    8192

static struct {
    char program[64];
    rt_log_level level;
    rt_log_format format;
    FILE *out;
    char *secrets[RT_LOG_MAX_SECRETS];
    size_t nsecrets;
    pthread_mutex_t lock;
} g_log = {"retrig", RT_LOG_INFO, RT_LOG_AUTO, NULL, {0}, 0, PTHREAD_MUTEX_INITIALIZER};

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void rt_log_init(const char *program)
{
    snprintf(g_log.program, sizeof g_log.program, "%s", program ? program : "retrig");
}

void rt_log_set_level(rt_log_level level) { g_log.level = level; }
rt_log_level rt_log_get_level(void) { return g_log.level; }
bool rt_log_enabled(rt_log_level level) { return level >= g_log.level; }
void rt_log_set_output(FILE *out) { g_log.out = out; }
void rt_log_set_format(rt_log_format format) { g_log.format = format; }

int rt_log_parse_format(const char *name, rt_log_format *format)
{
    if (!name) return RT_EINVAL;
    if (!strcmp(name, "auto"))
        *format = RT_LOG_AUTO;
    else if (!strcmp(name, "json"))
        *format = RT_LOG_JSON;
    else if (!strcmp(name, "text"))
        *format = RT_LOG_TEXT;
    else
        return RT_EINVAL;
    return 0;
}

/* Whether this line is written as text (checked under the lock). */
static bool text_format(FILE *out)
{
    if (g_log.format == RT_LOG_AUTO) return isatty(fileno(out)) == 1;
    return g_log.format == RT_LOG_TEXT;
}

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

/* A line being built: at most RT_LOG_LINE_MAX - 1 bytes, always room kept for the end. */
typedef struct line {
    char buf[RT_LOG_LINE_MAX];
    size_t len;
    bool cut; /* a value did not fit: it was cut, and nothing after it was written */
} line;

#define TRUNCATED_TAIL ",\"truncated\":true}"
/* What must still fit after any unit of a string: its closing quote and the tail. */
#define LINE_LIMIT (RT_LOG_LINE_MAX - 1 - (sizeof TRUNCATED_TAIL - 1) - 1)

/* Appends raw bytes if they fit under the limit; false (nothing written) otherwise. */
static bool put_raw(line *l, const char *s, size_t n)
{
    if (l->len + n > LINE_LIMIT) return false;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    return true;
}

/* The JSON form of the character at p (at most 6 bytes into out); *used: bytes of p read.
 * Invalid UTF-8 becomes \ufffd. */
static size_t escape_unit(const unsigned char *p, char out[8], size_t *used)
{
    unsigned char c = *p;
    *used = 1;
    switch (c) {
    case '"': memcpy(out, "\\\"", 2); return 2;
    case '\\': memcpy(out, "\\\\", 2); return 2;
    case '\n': memcpy(out, "\\n", 2); return 2;
    case '\r': memcpy(out, "\\r", 2); return 2;
    case '\t': memcpy(out, "\\t", 2); return 2;
    default: break;
    }
    if (c < 0x20 || c == 0x7f) return (size_t)snprintf(out, 8, "\\u%04x", c);
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    size_t n = (c >= 0xf0 && c <= 0xf4)   ? 4
               : (c >= 0xe0 && c <= 0xef) ? 3
               : (c >= 0xc2 && c <= 0xdf) ? 2
                                          : 0;
    bool ok = n > 0 && strnlen((const char *)p, n) == n && rt_utf8_valid((const char *)p, n);
    if (!ok) {
        memcpy(out, "\\ufffd", 6);
        return 6;
    }
    memcpy(out, p, n);
    *used = n;
    return n;
}

/* Appends s as a JSON string. When it does not fit, the string is cut after the last whole
 * character or escape that fits, closed, and the line is marked cut. Returns false when not
 * even the quotes fit (nothing written). */
static bool put_string(line *l, const char *s)
{
    if (l->len + 2 > LINE_LIMIT) return false;
    l->buf[l->len++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        char unit[8];
        size_t used, n = escape_unit(p, unit, &used);
        if (l->len + n + 1 > LINE_LIMIT) {
            l->cut = true;
            break;
        }
        memcpy(l->buf + l->len, unit, n);
        l->len += n;
        p += used;
    }
    l->buf[l->len++] = '"';
    return true;
}

/* Appends text redacted (registered secrets and URL passwords, on the raw text: before
 * escaping, so a secret with a quote or a backslash is found, and before any cut, so a
 * secret is never printed in part). Call with the lock held. */
static bool put_redacted(line *l, const char *text)
{
    size_t size = 3 * strlen(text) + 4;
    char *clean = malloc(size);
    if (!clean) return put_string(l, "(out of memory)");
    redact_locked(text, clean, size);
    bool ok = put_string(l, clean);
    free(clean);
    return ok;
}

/* ,"key":"value" (or null), whole, or cut inside the value; a field that cannot even start
 * is left out and the line marked cut. */
static void put_field(line *l, const char *key, const char *value)
{
    size_t start = l->len;
    bool ok = put_raw(l, ",", 1) && put_redacted(l, key) && !l->cut && put_raw(l, ":", 1) &&
              (value ? put_redacted(l, value) : put_raw(l, "null", 4));
    if (!ok) {
        l->len = start; /* the key was cut or the value could not start: drop the field */
        l->cut = true;
    }
}

/* Appends s to buf (escaping control characters as \n, \t or \xNN, so that text from
 * outside cannot drive the terminal); cut before the cap at a character boundary. */
static void append_text(char *buf, size_t *len, size_t cap, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8] = "";
        if (*p == '\n')
            snprintf(esc, sizeof esc, "\\n");
        else if (*p == '\t')
            snprintf(esc, sizeof esc, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            snprintf(esc, sizeof esc, "\\x%02x", *p);
        size_t n = esc[0] ? strlen(esc) : 1;
        if (*len + n + 1 >= cap) {
            /* Never half a character: drop a lead byte whose tail does not fit. */
            while (*len > 0 && ((unsigned char)buf[*len - 1] & 0xc0) == 0x80) (*len)--;
            if (*len > 0 && (unsigned char)buf[*len - 1] >= 0xc0) (*len)--;
            break;
        }
        if (esc[0])
            memcpy(buf + *len, esc, n);
        else
            buf[*len] = (char)*p;
        *len += n;
    }
    buf[*len] = '\0';
}

/* The text form: "<prog>: [warning: ]<msg>[: <error>][ (key=value, ...)]", then
 * "hint: ..." on its own line. Each value is redacted before it is escaped. Called with
 * the lock held. */
static void write_text(FILE *out, rt_log_level level, const char *msg, va_list ap)
{
    char text[RT_LOG_LINE_MAX], clean[RT_LOG_LINE_MAX], extra[RT_LOG_LINE_MAX] = "";
    const char *error = NULL, *hint = NULL;
    size_t len = 0, xlen = 0;
    redact_locked(g_log.program, clean, sizeof clean);
    append_text(text, &len, sizeof text, clean);
    append_text(text, &len, sizeof text,
                level == RT_LOG_ERROR  ? ": "
                : level == RT_LOG_WARN ? ": warning: "
                                       : ": ");
    redact_locked(msg ? msg : "", clean, sizeof clean);
    append_text(text, &len, sizeof text, clean);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (!key) break;
        const char *value = va_arg(ap, const char *);
        if (!strcmp(key, "error") && !error) {
            error = value;
            continue;
        }
        if (!strcmp(key, "hint") && !hint) {
            hint = value;
            continue;
        }
        append_text(extra, &xlen, sizeof extra, xlen ? ", " : " (");
        append_text(extra, &xlen, sizeof extra, key);
        append_text(extra, &xlen, sizeof extra, "=");
        redact_locked(value ? value : "null", clean, sizeof clean);
        append_text(extra, &xlen, sizeof extra, clean);
    }
    if (error && *error) {
        redact_locked(error, clean, sizeof clean);
        /* "cannot connect to Postgres" + "cannot connect to Postgres at ...": say it once. */
        size_t mlen = msg ? strlen(msg) : 0;
        if (mlen && !strncmp(clean, msg, mlen)) {
            len = 0;
            append_text(text, &len, sizeof text, g_log.program);
            append_text(text, &len, sizeof text, level == RT_LOG_WARN ? ": warning: " : ": ");
        } else {
            append_text(text, &len, sizeof text, ": ");
        }
        append_text(text, &len, sizeof text, clean);
    }
    if (xlen) append_text(extra, &xlen, sizeof extra, ")");
    fprintf(out, "%s%s\n", text, extra);
    if (hint) {
        redact_locked(hint, clean, sizeof clean);
        len = 0;
        append_text(text, &len, sizeof text, clean);
        fprintf(out, "hint: %s\n", text);
    }
    fflush(out);
}

void rt_log_write(rt_log_level level, const char *msg, ...)
{
    {
        FILE *out = g_log.out ? g_log.out : stderr;
        pthread_mutex_lock(&g_log.lock);
        if (text_format(out)) {
            va_list ap;
            va_start(ap, msg);
            write_text(out, level, msg, ap);
            va_end(ap);
            pthread_mutex_unlock(&g_log.lock);
            return;
        }
        pthread_mutex_unlock(&g_log.lock);
    }
    line *l = malloc(sizeof *l);
    if (!l) return;
    l->len = 0;
    l->cut = false;
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    l->len = (size_t)snprintf(
        l->buf, sizeof l->buf,
        "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\",\"level\":\"%s\",\"prog\":",
        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
        (int)(tv.tv_usec / 1000), level_names[level & 3]);

    pthread_mutex_lock(&g_log.lock);
    put_redacted(l, g_log.program);
    if (put_raw(l, ",\"msg\":", 7)) put_redacted(l, msg ? msg : "");
    va_list ap;
    va_start(ap, msg);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (!key) break;
        const char *value = va_arg(ap, const char *);
        if (!l->cut) put_field(l, key, value);
    }
    va_end(ap);
    /* LINE_LIMIT kept room for this. */
    const char *tail = l->cut ? TRUNCATED_TAIL : "}";
    memcpy(l->buf + l->len, tail, strlen(tail));
    l->len += strlen(tail);
    l->buf[l->len] = '\0';
    FILE *out = g_log.out ? g_log.out : stderr;
    fputs(l->buf, out);
    fputc('\n', out);
    fflush(out);
    pthread_mutex_unlock(&g_log.lock);
    free(l);
}
