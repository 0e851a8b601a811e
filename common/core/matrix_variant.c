/* SPDX-License-Identifier: MPL-2.0 */
/* matrix_variant.c - a GitHub matrix job's name read as OS, Python version and partition
 * (the rule is in matrix_variant.h). */
#include "common/core/matrix_variant.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_WORDS 32

typedef struct word {
    const char *at;
    size_t len;
} word;

static bool is(const word *w, const char *text)
{
    return w->len == strlen(text) && !strncasecmp(w->at, text, w->len);
}

static bool is_any(const word *w, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (is(w, list[i])) return true;
    return false;
}

/* w from `from` on is digits only (at least one). */
static bool digits(const word *w, size_t from)
{
    if (from >= w->len) return false;
    for (size_t i = from; i < w->len; i++)
        if (!isdigit((unsigned char)w->at[i])) return false;
    return true;
}

/* The words of name, at most MAX_WORDS. */
static size_t split(const char *name, word *words)
{
    size_t n = 0;
    for (const char *p = name; *p && n < MAX_WORDS;) {
        size_t len = strcspn(p, "-_ ,()[]:\t");
        if (len) words[n++] = (word){p, len};
        p += len;
        p += strspn(p, "-_ ,()[]:\t");
    }
    return n;
}

/* Copies the text from a's start to b's end (as written) into out. */
static void copy_span(const word *a, const word *b, char *out)
{
    size_t len = (size_t)(b->at + b->len - a->at);
    if (len >= RT_MATRIX_FIELD_MAX) len = RT_MATRIX_FIELD_MAX - 1;
    memcpy(out, a->at, len);
    out[len] = '\0';
}

/* The OS family w starts, or NULL: the keyword alone, or followed by digits ("windows11"). */
static const char *os_family(const word *w)
{
    static const struct {
        const char *key, *family;
    } keys[] = {{"ubuntu", "Linux"}, {"windows", "Windows"}, {"macos", "macOS"},
                {"linux", "Linux"},  {"win", "Windows"},     {"mac", "macOS"},
                {"osx", "macOS"},    {"darwin", "macOS"},    {"debian", "Linux"},
                {"fedora", "Linux"}, {"alpine", "Linux"},    {"centos", "Linux"}};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        size_t k = strlen(keys[i].key);
        if (w->len >= k && !strncasecmp(w->at, keys[i].key, k) && (w->len == k || digits(w, k)))
            return keys[i].family;
    }
    return NULL;
}

/* An OS version: "latest", or a number whose first group has two or more digits. */
static bool os_version(const word *w)
{
    if (is(w, "latest")) return true;
    size_t first = strspn(w->at, "0123456789");
    if (first < 2 || first > w->len) return false;
    for (size_t i = first; i < w->len; i++)
        if (!isdigit((unsigned char)w->at[i]) && w->at[i] != '.') return false;
    return true;
}

/* "3.12", "3.14t", "2.7", "3.12.1": a Python version as written, or false. */
static bool dotted_python(const char *at, size_t len)
{
    if (len < 3 || (at[0] != '2' && at[0] != '3') || at[1] != '.') return false;
    size_t i = 2, groups = 0;
    while (i < len) {
        size_t n = 0;
        while (i + n < len && isdigit((unsigned char)at[i + n])) n++;
        if (!n || n > 2) return false;
        i += n;
        groups++;
        if (i < len && at[i] == '.' && groups < 2) {
            i++;
            continue;
        }
        break;
    }
    return i == len || (i == len - 1 && at[i] == 't');
}

/* A Python version in w written as "3.12" into out; false when w names none. */
static bool python_version(const word *w, char *out)
{
    static const char *const prefixes[] = {"python", "pypy", "py", "cp", NULL};
    const char *at = w->at, *prefix = "";
    size_t len = w->len, k = 0;
    for (size_t i = 0; prefixes[i] && !k; i++) {
        size_t n = strlen(prefixes[i]);
        if (len > n && !strncasecmp(at, prefixes[i], n) && isdigit((unsigned char)at[n])) {
            k = n;
            prefix = !strcmp(prefixes[i], "pypy") ? "pypy" : "";
        }
    }
    at += k;
    len -= k;
    if (dotted_python(at, len) || (k && len == 1 && (at[0] == '2' || at[0] == '3'))) {
        snprintf(out, RT_MATRIX_FIELD_MAX, "%s%.*s", prefix, (int)len, at);
        return true;
    }
    /* "py312", "cp27", "py314t": the major digit, then the minor */
    size_t n = strspn(at, "0123456789");
    bool t = n + 1 == len && at[n] == 't';
    if (!k || (n != len && !t) || n < 2 || n > 3 || (at[0] != '2' && at[0] != '3')) return false;
    snprintf(out, RT_MATRIX_FIELD_MAX, "%s%c.%.*s%s", prefix, at[0], (int)n - 1, at + 1,
             t ? "t" : "");
    return true;
}

/* A partition starting at words[i] into out: how many words it takes (0: none). */
static size_t partition(const word *words, size_t i, size_t n, char *out)
{
    static const char *const keys[] = {"shard", "partition", "part",  "group",
                                       "chunk", "split",     "slice", NULL};
    const word *w = &words[i];
    if ((w->len > 2 && !strncasecmp(w->at, "ci", 2) && digits(w, 2)) ||
        (w->len > 5 && !strncasecmp(w->at, "notci", 5) && digits(w, 5))) {
        snprintf(out, RT_MATRIX_FIELD_MAX, "%.*s", (int)w->len, w->at);
        return 1;
    }
    if (is(w, "not") && i + 1 < n && words[i + 1].len > 2 &&
        !strncasecmp(words[i + 1].at, "ci", 2) && digits(&words[i + 1], 2)) {
        snprintf(out, RT_MATRIX_FIELD_MAX, "not%.*s", (int)words[i + 1].len, words[i + 1].at);
        return 2;
    }
    /* "1of4", "1/4", "1 of 4" */
    size_t a = strspn(w->at, "0123456789");
    if (a && a < w->len) {
        const char *rest = w->at + a;
        size_t sep = !strncasecmp(rest, "of", 2) ? 2 : rest[0] == '/' ? 1 : 0;
        if (sep && a + sep < w->len && digits(w, a + sep)) {
            snprintf(out, RT_MATRIX_FIELD_MAX, "%.*s", (int)w->len, w->at);
            return 1;
        }
    }
    if (a == w->len && i + 2 < n && is(&words[i + 1], "of") && digits(&words[i + 2], 0)) {
        snprintf(out, RT_MATRIX_FIELD_MAX, "%.*sof%.*s", (int)w->len, w->at, (int)words[i + 2].len,
                 words[i + 2].at);
        return 3;
    }
    for (size_t k = 0; keys[k]; k++) {
        size_t key = strlen(keys[k]);
        if (w->len < key || strncasecmp(w->at, keys[k], key)) continue;
        if (w->len > key && digits(w, key)) {
            snprintf(out, RT_MATRIX_FIELD_MAX, "%s%.*s", keys[k], (int)(w->len - key), w->at + key);
            return 1;
        }
        if (w->len == key && i + 1 < n && digits(&words[i + 1], 0)) {
            snprintf(out, RT_MATRIX_FIELD_MAX, "%s%.*s", keys[k], (int)words[i + 1].len,
                     words[i + 1].at);
            return 2;
        }
    }
    return 0;
}

bool rt_matrix_variant_parse(const char *name, rt_matrix_variant *out)
{
    static const char *const qualifiers[] = {"arm",     "arm64", "x64",   "x86",    "amd64",
                                             "aarch64", "intel", "large", "xlarge", NULL};
    static const char *const filler[] = {"test",     "tests",     "testing", "result",  "results",
                                         "report",   "reports",   "junit",   "pytest",  "xml",
                                         "artifact", "artifacts", "ci",      "default", "run",
                                         "unit",     "coverage",  "none",    "null",    NULL};
    memset(out, 0, sizeof *out);
    if (!name) return false;
    word words[MAX_WORDS];
    size_t n = split(name, words);
    bool used[MAX_WORDS] = {false};
    for (size_t i = 0; i < n; i++) {
        if (used[i]) continue;
        const char *family = !out->os_family ? os_family(&words[i]) : NULL;
        if (family) {
            size_t last = i;
            bool version =
                words[i].len > 0 && isdigit((unsigned char)words[i].at[words[i].len - 1]);
            while (last + 1 < n) {
                const word *next = &words[last + 1];
                if (!version && os_version(next))
                    version = true;
                else if (!is_any(next, qualifiers))
                    break;
                last++;
            }
            copy_span(&words[i], &words[last], out->os);
            out->os_family = family;
            for (size_t k = i; k <= last; k++) used[k] = true;
            continue;
        }
        if (!out->python[0] && python_version(&words[i], out->python)) {
            used[i] = true;
            continue;
        }
        size_t took = !out->partition[0] ? partition(words, i, n, out->partition) : 0;
        for (size_t k = 0; k < took; k++) used[i + k] = true;
    }
    bool parsed = out->os_family || out->python[0] || out->partition[0];
    /* the label: the other words, each run of adjacent ones as written */
    size_t len = 0;
    for (size_t i = 0; parsed && i < n; i++) {
        if (used[i] || is_any(&words[i], filler)) continue;
        size_t j = i;
        while (j + 1 < n && !used[j + 1] && !is_any(&words[j + 1], filler)) j++;
        int wrote = snprintf(out->label + len, sizeof out->label - len, "%s%.*s", len ? " " : "",
                             (int)(words[j].at + words[j].len - words[i].at), words[i].at);
        if (wrote < 0 || (size_t)wrote >= sizeof out->label - len) break;
        len += (size_t)wrote;
        i = j;
    }
    return parsed;
}

void rt_matrix_variant_describe(const char *name, char *out, size_t size)
{
    if (!size) return;
    rt_matrix_variant v;
    if (!rt_matrix_variant_parse(name, &v)) {
        snprintf(out, size, "%s", name ? name : "");
        return;
    }
    const char *parts[4] = {v.os, v.python, v.label, v.partition};
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < 4; i++) {
        if (!parts[i][0]) continue;
        bool py = i == 1 && isdigit((unsigned char)parts[i][0]);
        int wrote =
            snprintf(out + len, size - len, "%s%s%s", len ? " " : "", py ? "py" : "", parts[i]);
        if (wrote < 0 || (size_t)wrote >= size - len) break;
        len += (size_t)wrote;
    }
}
