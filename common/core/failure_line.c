/* SPDX-License-Identifier: MPL-2.0 */
/* failure_line.c - normalises failure lines (TEST-UNEXPECTED-*, PROCESS-CRASH) into stable
 * signatures (rules in the header). One left-to-right pass per rule group; placeholders are
 * never re-matched. */
#include "common/core/failure_line.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/utf8.h"

typedef struct buf {
    char *p;
    size_t n, cap;
    bool oom;
} buf;

static void buf_put(buf *b, const char *s, size_t len)
{
    if (b->oom) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + len + 1) cap *= 2;
        char *grown = realloc(b->p, cap);
        if (!grown) {
            b->oom = true;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void buf_str(buf *b, const char *s) { buf_put(b, s, strlen(s)); }

/* The result, or NULL when memory ran out (the buffer is freed then). */
static char *buf_take(buf *b)
{
    if (!b->oom && !b->p) buf_put(b, "", 0);
    if (b->oom) {
        free(b->p);
        return NULL;
    }
    return b->p;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_alnum(char c) { return is_digit(c) || is_alpha(c); }
static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c; }

/* Count of consecutive digits at s[i..n). */
static size_t digits_at(const char *s, size_t i, size_t n)
{
    size_t k = 0;
    while (i + k < n && is_digit(s[i + k])) k++;
    return k;
}

static bool starts_with(const char *s, size_t i, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n - i >= l && !memcmp(s + i, lit, l);
}

static bool starts_with_nocase(const char *s, size_t i, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    if (n - i < l) return false;
    for (size_t k = 0; k < l; k++)
        if (lower(s[i + k]) != lit[k]) return false;
    return true;
}

/* Rules 1 and 2: ANSI escapes removed, control characters to spaces, whitespace collapsed,
 * trimmed. */
static char *clean_text(const char *text, size_t len)
{
    buf b = {0};
    bool space = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == 0x1b) {
            if (i + 1 < len && text[i + 1] == '[') { /* CSI: parameters, intermediates, final */
                i += 2;
                while (i < len && (unsigned char)text[i] >= 0x20 && (unsigned char)text[i] <= 0x3f)
                    i++;
                continue; /* i is on the final byte (or past the end) */
            }
            if (i + 1 < len && text[i + 1] == ']') { /* OSC: up to BEL or ESC \ */
                i += 2;
                while (i < len && text[i] != 0x07 &&
                       !(text[i] == 0x1b && i + 1 < len && text[i + 1] == '\\'))
                    i++;
                if (i < len && text[i] == 0x1b) i++;
                continue;
            }
            i++; /* a two-byte escape */
            continue;
        }
        if (c < 0x20 || c == 0x7f || c == ' ') {
            space = true;
            continue;
        }
        if (space && b.n > 0) buf_put(&b, " ", 1);
        space = false;
        buf_put(&b, (const char *)&text[i], 1);
    }
    return buf_take(&b);
}

/* Takes s (malloc'd, may be NULL) and gives it back as valid UTF-8: ill-formed sequences
 * (bytes that were never UTF-8, or a character an escape sequence ate half of) become
 * U+FFFD. NULL when s was NULL or memory is short. */
static char *valid_text(char *s)
{
    if (!s || rt_utf8_valid(s, strlen(s))) return s;
    char *fixed = rt_utf8_sanitize(s, strlen(s));
    free(s);
    return fixed;
}

/* Length of the volatile temp-directory prefix at s[i] (rule 6d), 0 when none. */
static size_t temp_prefix(const char *s, size_t i, size_t n)
{
    size_t j = i;
    if (starts_with(s, j, n, "/private/")) j += 8;
    if (starts_with(s, j, n, "/tmp") && (j + 4 == n || s[j + 4] == '/')) return j + 4 - i;
    if (starts_with(s, j, n, "/var/folders/")) {
        j += 13;
        for (int comp = 0; comp < 2; comp++) { /* two per-machine random components */
            while (j < n && s[j] != '/' && s[j] != ' ') j++;
            if (comp == 0 && j < n && s[j] == '/') j++;
        }
        if (starts_with(s, j, n, "/T") && (j + 2 == n || s[j + 2] == '/')) j += 2;
        return j - i;
    }
    /* Windows: X:\...\Temp within one path token. */
    if (n - i >= 3 && is_alpha(s[i]) && s[i + 1] == ':' && (s[i + 2] == '\\' || s[i + 2] == '/')) {
        for (j = i + 2; j < n && s[j] != ' ' && s[j] != '"' && s[j] != '\''; j++) {
            if ((s[j] == '\\' || s[j] == '/') && starts_with_nocase(s, j + 1, n, "temp") &&
                (j + 5 == n || s[j + 5] == '\\' || s[j + 5] == '/'))
                return j + 5 - i;
        }
    }
    return 0;
}

/* Does the path component look generated (rule 6d)? */
static bool random_component(const char *s, size_t len)
{
    if (len == 0) return false;
    if (len >= 3 && lower(s[0]) == 't' && lower(s[1]) == 'm' && lower(s[2]) == 'p') return true;
    for (size_t k = 0; k < len; k++)
        if (is_digit(s[k])) return true;
    for (size_t k = 0; k + 9 <= len; k++)
        if (!memcmp(s + k, "mozprofil", 9) || !memcmp(s + k, "mozrunner", 9)) return true;
    return false;
}

/* A UUID at s[i] (8-4-4-4-12 hex): its length, else 0. */
static size_t uuid_at(const char *s, size_t i, size_t n)
{
    static const int groups[] = {8, 4, 4, 4, 12};
    size_t j = i;
    for (int g = 0; g < 5; g++) {
        for (int k = 0; k < groups[g]; k++, j++)
            if (j >= n || !is_hex(s[j])) return 0;
        if (g < 4) {
            if (j >= n || s[j] != '-') return 0;
            j++;
        }
    }
    if (j < n && is_alnum(s[j])) return 0;
    return j - i;
}

/* An ISO 8601 date-time or a clock time at s[i]: its length, else 0. */
static size_t time_at(const char *s, size_t i, size_t n)
{
    size_t j = i;
    if (digits_at(s, j, n) == 4 && j + 10 < n && s[j + 4] == '-' && digits_at(s, j + 5, n) == 2 &&
        s[j + 7] == '-' && digits_at(s, j + 8, n) == 2 && (s[j + 10] == 'T' || s[j + 10] == ' ') &&
        digits_at(s, j + 11, n) == 2 && j + 13 < n && s[j + 13] == ':' &&
        digits_at(s, j + 14, n) == 2) {
        /* Where the match may end: after the minutes, seconds, fraction, zone. The longest
         * one not glued to a word character wins, so "12:34:56,234ms" is a time and a
         * duration; were it nothing, the duration's "<n>" would let a second pass see a
         * time and normalising would not be idempotent. */
        size_t ends[4], count = 0;
        j += 16;
        ends[count++] = j;
        if (j < n && s[j] == ':' && digits_at(s, j + 1, n) == 2) {
            j += 3;
            ends[count++] = j;
            if (j < n && (s[j] == '.' || s[j] == ',') && digits_at(s, j + 1, n) > 0) {
                j += 1 + digits_at(s, j + 1, n);
                ends[count++] = j;
            }
        }
        if (j < n && s[j] == 'Z') {
            ends[count++] = j + 1;
        } else if (j < n && (s[j] == '+' || s[j] == '-') && digits_at(s, j + 1, n) == 2) {
            j += 3;
            if (j < n && s[j] == ':' && digits_at(s, j + 1, n) == 2)
                j += 3;
            else if (digits_at(s, j, n) == 2)
                j += 2;
            ends[count++] = j;
        }
        while (count > 0) {
            size_t e = ends[--count];
            if (e >= n || (!is_alnum(s[e]) && s[e] != ':')) return e - i;
        }
        return 0;
    }
    size_t h = digits_at(s, j, n);
    if (h < 1 || h > 2) return 0;
    j += h;
    for (int part = 0; part < 2; part++) {
        if (j >= n || s[j] != ':' || digits_at(s, j + 1, n) != 2) return 0;
        j += 3;
    }
    if (j < n && s[j] == '.' && digits_at(s, j + 1, n) > 0) j += 1 + digits_at(s, j + 1, n);
    if (j < n && (is_alnum(s[j]) || s[j] == ':')) return 0;
    return j - i;
}

/* A duration (number and unit) at s[i]: the length of the number, and *unit_end the end of
 * the unit; 0 when none. */
static size_t duration_at(const char *s, size_t i, size_t n, size_t *unit_end)
{
    /* Units that may follow a space; the short ones ("s", "us", "ns") only glued on. */
    static const char *const spaced[] = {"milliseconds", "millisecond", "seconds", "second",
                                         "minutes",      "minute",      "mins",    "min",
                                         "secs",         "sec",         "ms",      NULL};
    static const char *const glued[] = {"us", "ns", "s", NULL};
    size_t j = i + digits_at(s, i, n);
    if (j == i) return 0;
    if (j < n && s[j] == '.' && digits_at(s, j + 1, n) > 0) j += 1 + digits_at(s, j + 1, n);
    size_t number_end = j;
    for (int pass = 0; pass < 2; pass++) {
        size_t u = number_end + (size_t)pass; /* pass 1: after one space */
        if (pass == 1 && (u > n || s[number_end] != ' ')) break;
        for (const char *const *unit = spaced; *unit; unit++) {
            size_t l = strlen(*unit);
            if (starts_with(s, u, n, *unit) && (u + l == n || !is_alnum(s[u + l]))) {
                *unit_end = u + l;
                return number_end - i;
            }
        }
        if (pass == 0) {
            for (const char *const *unit = glued; *unit; unit++) {
                size_t l = strlen(*unit);
                if (starts_with(s, u, n, *unit) && (u + l == n || !is_alnum(s[u + l]))) {
                    *unit_end = u + l;
                    return number_end - i;
                }
            }
        }
    }
    return 0;
}

/* Rule 6 over an already cleaned text. '>' counts as a word character on the left, so a
 * placeholder behaves like the digits it replaced and a second pass changes nothing. Long because
 * it tries each kind of volatile text in turn at every position (UUID, hex address, time,
 * temporary path, local port, pid, GECKO(n), "[Parent n,", duration, long number), each with its
 * own boundary rules and placeholder. */
static char *normalise_volatile(const char *s, size_t n)
{
    buf b = {0};
    size_t i = 0;
    while (i < n && !b.oom) {
        char prev = i ? s[i - 1] : ' ';
        /* The digits after "1." or "<n>." are a fraction, never the start of anything. */
        bool fraction = prev == '.' && i >= 2 && (is_digit(s[i - 2]) || s[i - 2] == '>');
        bool boundary = !is_alnum(prev) && prev != '>' && !fraction;
        size_t len, end;
        if (boundary && (len = uuid_at(s, i, n)) > 0) {
            buf_str(&b, "<uuid>");
            i += len;
            continue;
        }
        /* "libc.so.6 + 0x0000000000114cf9": an offset in a module, which names the crash site. */
        bool module_offset = i >= 3 && s[i - 1] == ' ' && s[i - 2] == '+' && s[i - 3] == ' ';
        if (boundary && !module_offset && s[i] == '0' && i + 1 < n &&
            (s[i + 1] == 'x' || s[i + 1] == 'X')) {
            size_t k = 0;
            while (i + 2 + k < n && is_hex(s[i + 2 + k])) k++;
            if (k >= 9 && (i + 2 + k == n || !is_alnum(s[i + 2 + k]))) {
                buf_put(&b, s + i, 2);
                buf_str(&b, "<addr>");
                i += 2 + k;
                continue;
            }
        }
        if (boundary && is_digit(s[i]) && (len = time_at(s, i, n)) > 0) {
            buf_str(&b, "<time>");
            i += len;
            continue;
        }
        if (boundary && (len = temp_prefix(s, i, n)) > 0) {
            size_t j = i + len;
            if (j < n && (s[j] == '/' || s[j] == '\\')) {
                size_t k = j + 1;
                while (k < n && s[k] != '/' && s[k] != '\\' && s[k] != ' ' && s[k] != '"' &&
                       s[k] != '\'')
                    k++;
                if (random_component(s + j + 1, k - j - 1)) j = k;
            }
            buf_str(&b, "<tmp>");
            i = j;
            continue;
        }
        size_t host = 0;
        if (starts_with(s, i, n, "localhost:"))
            host = 9;
        else if (starts_with(s, i, n, "127.0.0.1:"))
            host = 9;
        else if (starts_with(s, i, n, "[::1]:"))
            host = 5;
        if (boundary && host > 0) { /* s[i + host] is the ':' */
            size_t d = digits_at(s, i + host + 1, n);
            if (d > 0 && (i + host + 1 + d == n || !is_alnum(s[i + host + 1 + d]))) {
                buf_put(&b, s + i, host + 1);
                buf_str(&b, "<port>");
                i += host + 1 + d;
                continue;
            }
        }
        if (boundary && starts_with_nocase(s, i, n, "pid")) {
            size_t j = i + 3;
            if (j < n && s[j] == ':')
                j++;
            else if (j < n && s[j] == '=')
                j++;
            if (j < n && s[j] == ' ') j++;
            size_t d = digits_at(s, j, n);
            if (j > i + 3 && d > 0 && (j + d == n || !is_alnum(s[j + d]))) {
                buf_put(&b, s + i, j - i);
                buf_str(&b, "<n>");
                i = j + d;
                continue;
            }
        }
        if (starts_with(s, i, n, "GECKO(") && boundary) {
            size_t d = digits_at(s, i + 6, n);
            if (d > 0 && i + 6 + d < n && s[i + 6 + d] == ')') {
                buf_str(&b, "GECKO(<n>)");
                i += 7 + d;
                continue;
            }
        }
        if (s[i] == '[') { /* "[Parent 1234, Main Thread]" */
            size_t j = i + 1;
            while (j < n && j - i <= 16 && is_alpha(s[j])) j++;
            if (j > i + 1 && j < n && s[j] == ' ') {
                size_t d = digits_at(s, j + 1, n);
                size_t after = j + 1 + d;
                if (d > 0 && after < n && (s[after] == ',' || s[after] == ':')) {
                    buf_put(&b, s + i, j + 1 - i);
                    buf_str(&b, "<n>");
                    i = after;
                    continue;
                }
            }
        }
        if (boundary && is_digit(s[i])) {
            if ((len = duration_at(s, i, n, &end)) > 0) {
                buf_str(&b, "<n>");
                buf_put(&b, s + i + len, end - (i + len));
                i = end;
                continue;
            }
            size_t d = digits_at(s, i, n);
            size_t whole = d; /* with its fraction, copied as one piece */
            if (i + d + 1 < n && s[i + d] == '.' && is_digit(s[i + d + 1]))
                whole += 1 + digits_at(s, i + d + 1, n);
            if (d >= 6 && (i + d == n || !is_alnum(s[i + d]))) {
                buf_str(&b, "<n>");
                buf_put(&b, s + i + d, whole - d);
            } else {
                buf_put(&b, s + i, whole);
            }
            i += whole;
            continue;
        }
        buf_put(&b, s + i, 1);
        i++;
    }
    return buf_take(&b);
}

char *rt_failure_line_normalise_message(const char *text, size_t len)
{
    char *clean = valid_text(clean_text(text, len));
    if (!clean) return NULL;
    char *out = normalise_volatile(clean, strlen(clean));
    free(clean);
    return out;
}

uint64_t rt_failure_line_hash(const char *text, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)text[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Rule 3: the harness prefixes Treeherder strips. Returns the offset past them. */
static size_t skip_prefixes(const char *s, size_t n)
{
    size_t i = 0;
    /* mozharness "HH:MM:SS LEVEL - " */
    size_t d = digits_at(s, i, n);
    if (d > 0 && s[d] == ':') {
        size_t j = d + 1 + digits_at(s, d + 1, n);
        if (j < n && s[j] == ':') {
            j += 1 + digits_at(s, j + 1, n);
            if (j < n && s[j] == ' ') {
                static const char *const levels[] = {"DEBUG",    "INFO",  "WARNING", "ERROR",
                                                     "CRITICAL", "FATAL", NULL};
                for (const char *const *l = levels; *l; l++) {
                    size_t k = j + 1;
                    if (starts_with(s, k, n, *l)) {
                        k += strlen(*l);
                        if (starts_with(s, k, n, " - "))
                            i = k + 3;
                        else if (starts_with(s, k, n, " -") && k + 2 == n)
                            i = k + 2;
                        break;
                    }
                }
            }
        }
    }
    /* "GECKO(1234) | " or "PID 1234 | " */
    size_t j = i;
    if (starts_with(s, j, n, "GECKO(")) {
        size_t dd = digits_at(s, j + 6, n);
        if (dd > 0 && starts_with(s, j + 6 + dd, n, ") | ")) i = j + 6 + dd + 4;
    } else if (starts_with(s, j, n, "PID ")) {
        size_t dd = digits_at(s, j + 4, n);
        if (dd > 0 && starts_with(s, j + 4 + dd, n, " | ")) i = j + 4 + dd + 3;
    }
    /* "[1234] " */
    if (i < n && s[i] == '[') {
        size_t dd = digits_at(s, i + 1, n);
        if (dd > 0 && starts_with(s, i + 1 + dd, n, "] ")) i += dd + 3;
    }
    return i;
}

void rt_failure_line_free(rt_failure_line *line)
{
    if (!line) return;
    free(line->status);
    free(line->test);
    free(line->message);
    free(line->signature);
    memset(line, 0, sizeof *line);
}

static void set_hash(rt_failure_line *line)
{
    static const char hex[] = "0123456789abcdef";
    line->hash = rt_failure_line_hash(line->signature, strlen(line->signature));
    for (int k = 0; k < 16; k++) line->hash_hex[k] = hex[(line->hash >> (60 - 4 * k)) & 0xf];
    line->hash_hex[16] = '\0';
}

/* Rule 4: where the status word starts, SIZE_MAX when the line has none. The words before it
 * may only be a harness's labels ("REFTEST", "596 INFO"): upper-case letters, digits, '_' and
 * '-', so the status is always in the first " | " field. */
static size_t status_at(const char *s, size_t n)
{
    size_t crash = sizeof RT_FAILURE_LINE_CRASH - 1;
    for (size_t i = 0; i < n;) {
        if (starts_with(s, i, n, RT_FAILURE_LINE_PREFIX) ||
            (starts_with(s, i, n, RT_FAILURE_LINE_CRASH) &&
             (i + crash == n || s[i + crash] == ' ')))
            return i;
        size_t j = i;
        while (j < n && s[j] != ' ') {
            char c = s[j];
            if (!((c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '-')) return SIZE_MAX;
            j++;
        }
        i = j + 1; /* past the space: clean_text left single spaces */
    }
    return SIZE_MAX;
}

/* A crash field that only names the run: "pid: 1234" (mozlog's crash line without a test) or
 * a minidump id, a UUID, bare or in braces, with or without ".dmp"/".extra". */
static bool crash_run_id(const char *f, size_t len)
{
    if (starts_with_nocase(f, 0, len, "pid")) {
        size_t j = 3;
        if (j < len && (f[j] == ':' || f[j] == '=')) j++;
        if (j < len && f[j] == ' ') j++;
        return j > 3 && j < len && digits_at(f, j, len) == len - j;
    }
    size_t j = len > 0 && f[0] == '{' ? 1 : 0;
    size_t u = uuid_at(f, j, len);
    if (u == 0) return false;
    j += u;
    if (f[0] == '{') {
        if (j >= len || f[j] != '}') return false;
        j++;
    }
    return j == len || (len - j == 4 && !memcmp(f + j, ".dmp", 4)) ||
           (len - j == 6 && !memcmp(f + j, ".extra", 6));
}

/* A crash field that ends with the crash signature: "application crashed [@ sig]", a
 * MOZ_CRASH reason followed by "[@ sig]", or mozcrash's "[None]" and "[unknown top frame]". */
static bool crash_signature_field(const char *f, size_t len)
{
    if (len < 2 || f[len - 1] != ']') return false;
    for (size_t k = 0; k + 3 <= len; k++)
        if (f[k] == '[' && f[k + 1] == '@' && f[k + 2] == ' ') return true;
    static const char *const tails[] = {"[None]", "[unknown top frame]", NULL};
    for (const char *const *t = tails; *t; t++) {
        size_t l = strlen(*t);
        if (len >= l && !memcmp(f + len - l, *t, l) && (len == l || f[len - l - 1] == ' '))
            return true;
    }
    return false;
}

/* The fields of a crash line after "PROCESS-CRASH | " (s[from..n)), into TEST and MESSAGE
 * offsets (rule 5): mozcrash's "<reason> [@ sig] | <test>" (the signature first), the older
 * "<test> | application crashed [@ sig]", and either with a pid or a minidump id where the
 * test would be, which is then no test. */
static void split_crash(const char *s, size_t from, size_t n, size_t *test_start, size_t *test_end,
                        size_t *msg_start, size_t *msg_end)
{
    size_t first_end = n, last_start = from;
    for (size_t k = from; k + 3 <= n; k++) {
        if (memcmp(s + k, " | ", 3) != 0) continue;
        if (first_end == n) first_end = k;
        last_start = k + 3;
        k += 2; /* " | | " is one separator and a "|" */
    }
    if (first_end == n) { /* one field */
        *msg_start = *msg_end = *test_start = *test_end = n;
        if (crash_run_id(s + from, n - from)) return;
        if (crash_signature_field(s + from, n - from)) {
            *msg_start = from;
        } else {
            *test_start = from;
            *test_end = n;
        }
        return;
    }
    if (crash_signature_field(s + from, first_end - from) &&
        !crash_signature_field(s + last_start, n - last_start)) {
        *msg_start = from;
        *msg_end = last_start - 3;
        *test_start = last_start;
        *test_end = crash_run_id(s + last_start, n - last_start) ? last_start : n;
    } else {
        *test_start = from;
        *test_end = crash_run_id(s + from, first_end - from) ? from : first_end;
        *msg_start = first_end + 3;
        *msg_end = n;
    }
}

int rt_failure_line_parse(const char *text, size_t len, rt_failure_line *line)
{
    int rc = RT_ENOMEM;
    memset(line, 0, sizeof *line);
    /* Cut at a character boundary, and ill-formed bytes made U+FFFD: the signature is stored
     * in Postgres and sent in JSON, both of which refuse invalid UTF-8. */
    len = rt_utf8_boundary(text, len, RT_FAILURE_LINE_MAX_INPUT);
    char *clean = valid_text(clean_text(text, len));
    if (!clean) return RT_ENOMEM;
    /* U+FFFD takes 3 bytes where a bad byte took 1: cut again, so that a signature is never
     * longer than the input a parse reads, and parsing it again gives it back. */
    clean[rt_utf8_boundary(clean, strlen(clean), RT_FAILURE_LINE_MAX_INPUT)] = '\0';
    size_t n = strlen(clean);
    size_t start = skip_prefixes(clean, n);
    size_t at = status_at(clean + start, n - start);
    if (at == SIZE_MAX) {
        rc = RT_ENOTFOUND;
        goto out;
    }
    const char *s = clean + start + at;
    n -= start + at;
    size_t crash = sizeof RT_FAILURE_LINE_CRASH - 1;
    bool is_crash = starts_with(s, 0, n, RT_FAILURE_LINE_CRASH) && (n == crash || s[crash] == ' ');
    /* STATUS: up to the first space. */
    size_t status_end = 0;
    while (status_end < n && s[status_end] != ' ') status_end++;
    size_t test_start = status_end, test_end = status_end, msg_start = n, msg_end = n;
    if (starts_with(s, status_end, n, " | ") || (status_end + 2 == n && s[status_end + 1] == '|')) {
        size_t from = status_end + 3 > n ? n : status_end + 3;
        size_t end = n;
        if (end - from >= 2 && s[end - 1] == '|' && s[end - 2] == ' ')
            end -= 2; /* "STATUS | test |" */
        if (is_crash && from < end && s[from] != '|') {
            split_crash(s, from, end, &test_start, &test_end, &msg_start, &msg_end);
            /* With no test, the signature is "STATUS MESSAGE": a message starting with "|"
             * would read as a test. */
            while (test_start == test_end && msg_start < msg_end &&
                   (s[msg_start] == '|' || s[msg_start] == ' '))
                msg_start++;
        } else {
            test_start = test_end = from;
            const char *sep = NULL;
            for (size_t k = from; k + 3 <= n && !sep; k++)
                if (!memcmp(s + k, " | ", 3)) sep = s + k;
            if (sep) {
                test_end = (size_t)(sep - s);
                msg_start = test_end + 3;
            } else {
                test_end = end;
            }
        }
    } else if (status_end < n) {
        msg_start = status_end + 1; /* "STATUS message" with no test */
    }
    line->status = strndup(s, status_end);
    line->test = strndup(s + test_start, test_end - test_start);
    line->message = normalise_volatile(s + msg_start, msg_end - msg_start);
    if (!line->status || !line->test || !line->message) goto out;
    /* The signature is never longer than the input a parse reads (the separators it writes
     * may be longer than the line's): the message is cut, on a character boundary and
     * without a trailing space, so that parsing the signature gives it back. */
    size_t fixed = strlen(line->status) + 3 + strlen(line->test) + 3;
    if (fixed + strlen(line->message) > RT_FAILURE_LINE_MAX_INPUT) {
        size_t keep = fixed < RT_FAILURE_LINE_MAX_INPUT ? RT_FAILURE_LINE_MAX_INPUT - fixed : 0;
        keep = rt_utf8_boundary(line->message, strlen(line->message), keep);
        while (keep > 0 && line->message[keep - 1] == ' ') keep--;
        line->message[keep] = '\0';
    }
    buf b = {0};
    buf_str(&b, line->status);
    if (line->test[0]) {
        buf_str(&b, " | ");
        buf_str(&b, line->test);
    }
    if (line->message[0]) {
        buf_str(&b, line->test[0] ? " | " : " "); /* as the line had it, so it parses back */
        buf_str(&b, line->message);
    }
    line->signature = buf_take(&b);
    if (!line->signature) goto out;
    set_hash(line);
    rc = RT_OK;
out:
    free(clean);
    if (rc != RT_OK) rt_failure_line_free(line);
    return rc;
}

bool rt_failure_line_equal(const rt_failure_line *a, const rt_failure_line *b)
{
    return a->hash == b->hash && a->signature && b->signature &&
           !strcmp(a->signature, b->signature);
}

int rt_failure_line_copy(rt_failure_line *dst, const rt_failure_line *src)
{
    memset(dst, 0, sizeof *dst);
    dst->status = strdup(src->status ? src->status : "");
    dst->test = strdup(src->test ? src->test : "");
    dst->message = strdup(src->message ? src->message : "");
    dst->signature = strdup(src->signature ? src->signature : "");
    if (!dst->status || !dst->test || !dst->message || !dst->signature) {
        rt_failure_line_free(dst);
        return RT_ENOMEM;
    }
    dst->hash = src->hash;
    memcpy(dst->hash_hex, src->hash_hex, sizeof dst->hash_hex);
    return RT_OK;
}
