/* SPDX-License-Identifier: MPL-2.0 */
/* flaky_issue.c - the flaky-test issue state machine and its Markdown texts. */
#include "common/core/flaky_issue.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/failure_line.h"
#include "common/core/matrix_variant.h"
#include "common/core/utf8.h"

void rt_flaky_marker(const char *project, const char *test, char out[RT_FLAKY_MARKER_SIZE])
{
    size_t np = strlen(project), nt = strlen(test);
    /* FNV-1a 64 over project, NUL, test: two calls cannot join, so hash in one pass. */
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < np + 1 + nt; i++) {
        unsigned char c = i < np    ? (unsigned char)project[i]
                          : i == np ? 0
                                    : (unsigned char)test[i - np - 1];
        h ^= c;
        h *= 1099511628211ULL;
    }
    snprintf(out, RT_FLAKY_MARKER_SIZE, "retrig-flaky: %016llx", (unsigned long long)h);
}

const char *rt_flaky_only_variant(const rt_flaky_variant *variants, size_t n)
{
    const char *only = NULL;
    size_t failing = 0;
    for (size_t i = 0; i < n; i++)
        if (variants[i].failures > 0) {
            only = variants[i].name;
            failing++;
        }
    return n >= 2 && failing == 1 ? only : NULL;
}

const char *rt_flaky_only_os(const rt_flaky_variant *variants, size_t n)
{
    const char *failing = NULL;
    for (size_t i = 0; i < n; i++) {
        rt_matrix_variant v;
        rt_matrix_variant_parse(variants[i].name, &v);
        if (variants[i].failures <= 0) continue;
        if (!v.os_family || (failing && strcmp(failing, v.os_family))) return NULL;
        failing = v.os_family;
    }
    for (size_t i = 0; failing && i < n; i++) {
        rt_matrix_variant v;
        rt_matrix_variant_parse(variants[i].name, &v);
        if (variants[i].runs > 0 && v.os_family && strcmp(v.os_family, failing)) return failing;
    }
    return NULL;
}

bool rt_flaky_marker_matches(const char *first_line, const char *marker)
{
    size_t n = strlen(marker);
    if (!first_line || strncmp(first_line, "<!-- ", 5) || strncmp(first_line + 5, marker, n))
        return false;
    const char *rest = first_line + 5 + n;
    return !strcmp(rest, " -->") || !strncmp(rest, " -->\r", 5);
}

rt_flaky_action rt_flaky_decide(rt_flaky_state state, bool flaky, bool figures_changed,
                                time_t last_failure, time_t now, int quiet_days,
                                const char **reason)
{
    bool quiet = last_failure <= 0 || now - last_failure >= (time_t)quiet_days * 86400;
    switch (state) {
    case RT_FLAKY_NONE:
        *reason = flaky ? "flaky, no issue yet" : "not flaky";
        return flaky ? RT_FLAKY_CREATE : RT_FLAKY_NOTHING;
    case RT_FLAKY_OPEN:
        if (!flaky && quiet) {
            *reason = "no failure within flaky_issue_quiet_days";
            return RT_FLAKY_CLOSE;
        }
        *reason = figures_changed ? "figures changed" : "figures unchanged";
        return figures_changed ? RT_FLAKY_UPDATE : RT_FLAKY_NOTHING;
    case RT_FLAKY_CLOSED:
        *reason = flaky ? "flaky again" : "closed and quiet";
        return flaky ? RT_FLAKY_REOPEN : RT_FLAKY_NOTHING;
    }
    *reason = "unknown state";
    return RT_FLAKY_NOTHING;
}

const char *rt_flaky_action_name(rt_flaky_action action)
{
    switch (action) {
    case RT_FLAKY_NOTHING: return "nothing";
    case RT_FLAKY_CREATE: return "create";
    case RT_FLAKY_UPDATE: return "update";
    case RT_FLAKY_CLOSE: return "close";
    case RT_FLAKY_REOPEN: return "reopen";
    }
    return "?";
}

json_t *rt_flaky_figures_json(const rt_flaky_figures *f)
{
    json_t *first = json_null();
    if (f->first_failure_time)
        first = json_pack("{s:s, s:s?, s:s?, s:s?}", "time", f->first_failure_time, "branch",
                          f->first_failure_branch, "revision", f->first_failure_revision, "url",
                          f->first_failure_url);
    return json_pack("{s:i, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:f, s:I, s:b, s:o}", "window_days",
                     f->window_days, "runs", (json_int_t)f->runs, "failures",
                     (json_int_t)f->failures, "failure_rate", f->failure_rate, "branches",
                     (json_int_t)f->branches, "prs", (json_int_t)f->prs, "fork_branches",
                     (json_int_t)f->fork_branches, "main_failures", (json_int_t)f->main_failures,
                     "push_failure_chance", f->push_failure_chance, "rerun_flips",
                     (json_int_t)f->rerun_flips, "flaky", f->flaky, "first_failure",
                     first ? first : json_null());
}

bool rt_flaky_figures_changed(json_t *stored, json_t *fresh)
{
    static const char *const keys[] = {"runs",          "failures",    "branches", "prs",
                                       "main_failures", "rerun_flips", "flaky"};
    if (!json_is_object(stored)) return true;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!json_equal(json_object_get(stored, keys[i]), json_object_get(fresh, keys[i])))
            return true;
    return false;
}

size_t rt_utf8_prefix(const char *s, size_t max)
{
    if (strnlen(s, max + 1) <= max) return strlen(s);
    /* s[max] is the first byte left out: when it continues a character, that character
     * does not fit either */
    size_t i = max;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    return i;
}

/* ---- a growing string ---- */

typedef struct text {
    char *data;
    size_t len, cap;
    bool failed;
} text;

static void add(text *t, const char *s, size_t n)
{
    if (t->failed) return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 1024;
        while (t->len + n + 1 > cap) cap *= 2;
        char *grown = realloc(t->data, cap);
        if (!grown) {
            t->failed = true;
            return;
        }
        t->data = grown;
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

static void adds(text *t, const char *s) { add(t, s, strlen(s)); }

static void addf(text *t, const char *fmt, ...) RT_PRINTF(2, 3);
static void addf(text *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    rt_utf8_vformat(buf, sizeof buf, fmt, ap); /* never half a character */
    va_end(ap);
    adds(t, buf);
}

static char *finish(text *t)
{
    if (t->failed) {
        free(t->data);
        return NULL;
    }
    if (!t->data) add(t, "", 0);
    return t->failed ? NULL : t->data;
}

/* The longest run of backticks in s[0..n). */
static size_t longest_backticks(const char *s, size_t n)
{
    size_t best = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        if (run > best) best = run;
    }
    return best;
}

/* The bytes of the character at p (n bytes left) when it is one a reader cannot see but
 * that changes what is shown: a C1 control (U+0080-U+009F) or a bidirectional control
 * (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, which reorder the text around
 * them: a test name could show as another's); 0 for any other character. */
static size_t invisible_length(const unsigned char *p, size_t n)
{
    if (n >= 2 && p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) return 2;
    if (n >= 2 && p[0] == 0xD8 && p[1] == 0x9C) return 2;
    if (n >= 3 && p[0] == 0xE2 && p[1] == 0x80 &&
        (p[2] == 0x8E || p[2] == 0x8F || (p[2] >= 0xAA && p[2] <= 0xAE)))
        return 3;
    if (n >= 3 && p[0] == 0xE2 && p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9) return 3;
    return 0;
}

/* Printable text of s[0..n): control characters other than newline and tab dropped (C0,
 * DEL, C1) and so are bidirectional controls, "\r\n" as "\n"; single_line turns newlines
 * and tabs into spaces; in_table escapes '|' as "\\|" (GitHub splits a table row at every
 * unescaped '|', inside code spans too: a name could end its cell and leave a mention or a
 * link in the next). */
static void add_clean_in(text *t, const char *s, size_t n, bool single_line, bool in_table)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t skip = invisible_length((const unsigned char *)s + i, n - i);
        if (skip) {
            i += skip - 1;
        } else if (c == '\n' || c == '\t') {
            add(t, single_line ? " " : (const char *)&s[i], 1);
        } else if (c == '|' && in_table) {
            add(t, "\\|", 2);
        } else if (c >= 0x20 && c != 0x7f) {
            add(t, &s[i], 1);
        }
    }
}

static void add_clean(text *t, const char *s, size_t n, bool single_line)
{
    add_clean_in(t, s, n, single_line, false);
}

/* A Markdown code span holding s (at most max bytes, cut on a character boundary); in_table:
 * inside a table cell, its '|' escaped. */
static void add_code_span_in(text *t, const char *s, size_t max, bool in_table)
{
    size_t n = rt_utf8_prefix(s, max);
    size_t ticks = longest_backticks(s, n) + 1;
    for (size_t i = 0; i < ticks; i++) adds(t, "`");
    bool pad = n && (s[0] == '`' || s[n - 1] == '`');
    if (pad) adds(t, " ");
    add_clean_in(t, s, n, true, in_table);
    if (n < strlen(s)) adds(t, "…");
    if (pad) adds(t, " ");
    for (size_t i = 0; i < ticks; i++) adds(t, "`");
}

static void add_code_span(text *t, const char *s, size_t max)
{
    add_code_span_in(t, s, max, false);
}

/* Plain Markdown text: characters with a meaning escaped with a backslash. */
static void add_escaped(text *t, const char *s, size_t max)
{
    size_t n = rt_utf8_prefix(s, max);
    for (size_t i = 0; i < n; i++) {
        if (strchr("\\`*_[]<>#|~&!", s[i])) add(t, "\\", 1);
        add_clean(t, &s[i], 1, true);
    }
}

static void add_figures(text *t, const rt_flaky_figures *f)
{
    addf(t, "| figure (last %d days, every branch) | value |\n| --- | --- |\n", f->window_days);
    addf(t, "| failure rate | %.1f%% (%ld of %ld runs) |\n", 100.0 * f->failure_rate, f->failures,
         f->runs);
    addf(t, "| pull requests / branches hit | %ld / %ld |\n", f->prs, f->branches);
    if (f->fork_branches > 0)
        addf(t,
             "| of those, pull requests from forks (evidence only: not counted toward opening an "
             "issue) | %ld |\n",
             f->fork_branches);
    addf(t, "| failures on the main branch | %ld |\n", f->main_failures);
    if (f->prs_ran > 0)
        addf(t,
             "| chance a pull request sees it fail | %.1f%% (%ld of %ld pull requests and branches "
             "that ran it) |\n",
             100.0 * (double)f->prs_failed / (double)f->prs_ran, f->prs_failed, f->prs_ran);
    addf(t, "| chance a push sees it fail | %.1f%% |\n", 100.0 * f->push_failure_chance);
    addf(t, "| failed, then passed on a re-run of the same commit | %ld |\n", f->rerun_flips);
    if (f->outcome_flaky > 0)
        addf(t,
             "| of those, FLAKY in the report itself (failed, then passed within one run) | %ld "
             "|\n",
             f->outcome_flaky);
    if (f->outcome_disabled + f->outcome_collection_error + f->outcome_build_failed > 0)
        addf(t,
             "| runs reporting it DISABLED / COLLECTION_ERROR / BUILD_FAILED (no test failure, "
             "not counted) | %ld / %ld / %ld |\n",
             f->outcome_disabled, f->outcome_collection_error, f->outcome_build_failed);
    if (f->first_failure_time) {
        adds(t, "| first failure | ");
        add_escaped(t, f->first_failure_time, 40);
        if (f->first_failure_branch) {
            adds(t, " on ");
            add_code_span_in(t, f->first_failure_branch, 255, true);
        }
        if (f->first_failure_revision) {
            adds(t, " at commit ");
            add_code_span_in(t, f->first_failure_revision, 12, true);
        }
        if (f->first_failure_url && !strncmp(f->first_failure_url, "https://", 8) &&
            !strpbrk(f->first_failure_url, " ()<>[]\"'`\n\r\t")) {
            adds(t, " ([run](");
            add(t, f->first_failure_url, rt_utf8_prefix(f->first_failure_url, 500));
            adds(t, "))");
        }
        adds(t, " |\n");
    }
}

/* The failures by variant (matrix job, or platform/build type: variant_kind): a table, names
 * in code spans, and a sentence when one variant alone fails. A matrix job's table gives its
 * OS, Python version and partition (common/core/matrix_variant.h), and says so when every
 * failing job runs one OS. At most 50 rows. */
static void add_variants(text *t, const rt_flaky_figures *f)
{
    if (!f->nvariants) return;
    bool matrix = !f->variant_kind || !strcmp(f->variant_kind, "matrix job");
    const char *only = rt_flaky_only_variant(f->variants, f->nvariants);
    const char *only_os = matrix ? rt_flaky_only_os(f->variants, f->nvariants) : NULL;
    size_t failing = 0;
    for (size_t i = 0; i < f->nvariants; i++) failing += f->variants[i].failures > 0;
    adds(t, "\n");
    if (only) {
        char described[160];
        if (matrix)
            rt_matrix_variant_describe(only, described, sizeof described);
        else
            snprintf(described, sizeof described, "%s", only);
        adds(t, "It fails on one variant only: ");
        add_code_span(t, only, 255);
        if (strcmp(described, only)) {
            adds(t, " (");
            add_code_span(t, described, sizeof described);
            adds(t, ")");
        }
        addf(t, ", of %zu variants that ran it.", f->nvariants);
        if (only_os) addf(t, " It fails on %s only.", only_os);
        adds(t, "\n\n");
    } else if (only_os) {
        addf(t, "It fails on %s only: %zu of the %zu variants that ran it failed, all on %s.\n\n",
             only_os, failing, f->nvariants, only_os);
    }
    if (matrix)
        adds(t, "| variant (matrix job) | OS | Python | partition | failures / runs |\n"
                "| --- | --- | --- | --- | --- |\n");
    else
        addf(t, "| variant (%s) | failures / runs |\n| --- | --- |\n", f->variant_kind);
    for (size_t i = 0; i < f->nvariants && i < 50; i++) {
        adds(t, "| ");
        add_code_span_in(t, f->variants[i].name, 255, true);
        rt_matrix_variant v;
        rt_matrix_variant_parse(f->variants[i].name, &v);
        const char *cells[3] = {v.os, v.python, v.partition};
        for (size_t c = 0; matrix && c < 3; c++) {
            adds(t, " | ");
            if (cells[c][0])
                add_code_span_in(t, cells[c], RT_MATRIX_FIELD_MAX, true);
            else
                adds(t, "–");
        }
        addf(t, " | %ld / %ld |\n", f->variants[i].failures, f->variants[i].runs);
    }
    if (f->nvariants > 50)
        addf(t, "| … %zu more | |%s\n", f->nvariants - 50, matrix ? " | | |" : "");
}

static void add_excerpt(text *t, const char *message)
{
    if (!message || !*message) return;
    size_t n = rt_utf8_prefix(message, RT_FLAKY_EXCERPT_MAX);
    size_t ticks = longest_backticks(message, n) + 1;
    if (ticks < 3) ticks = 3;
    adds(t, "\nA failure, as its JUnit report gives it:\n\n");
    for (size_t i = 0; i < ticks; i++) adds(t, "`");
    adds(t, "text\n");
    add_clean(t, message, n, false);
    if (n < strlen(message)) adds(t, "\n[… cut]");
    adds(t, "\n");
    for (size_t i = 0; i < ticks; i++) adds(t, "`");
    adds(t, "\n");
}

char *rt_flaky_title(const rt_flaky_figures *f)
{
    text t = {0};
    adds(&t, "Flaky test: ");
    size_t room = RT_FLAKY_TITLE_MAX - t.len;
    size_t n = rt_utf8_prefix(f->test, room);
    add_clean(&t, f->test, n, true);
    if (n < strlen(f->test)) adds(&t, "…");
    return finish(&t);
}

char *rt_flaky_body(const rt_flaky_figures *f, const char *marker)
{
    text t = {0};
    addf(&t, "<!-- %s -->\n", marker);
    add_code_span(&t, f->test, RT_FLAKY_TEST_NAME_MAX);
    adds(&t, " is flaky in ");
    add_escaped(&t, f->project, 200);
    addf(&t, ": it failed on %ld pull requests or branches within %d days", f->branches,
         f->window_days);
    if (f->fork_branches > 0)
        addf(&t, " (%ld of them pull requests from forks, shown as evidence only)",
             f->fork_branches);
    if (f->main_failures) addf(&t, ", %ld times on the main branch", f->main_failures);
    adds(&t, ".\n\n");
    add_figures(&t, f);
    add_variants(&t, f);
    add_excerpt(&t, f->message);
    adds(&t, "\nretrig keeps this issue: it edits one comment with the latest figures while the "
             "test stays flaky, closes the issue once the test has been quiet, and reopens it "
             "if it fails again.\n");
    return finish(&t);
}

char *rt_flaky_comment(const rt_flaky_figures *f, const char *when)
{
    text t = {0};
    adds(&t, RT_FLAKY_FIGURES_HEAD "\nLatest figures (updated ");
    add_escaped(&t, when ? when : "", 40);
    adds(&t, "):\n\n");
    add_figures(&t, f);
    add_variants(&t, f);
    add_excerpt(&t, f->message);
    return finish(&t);
}

char *rt_flaky_close_comment(const rt_flaky_figures *f, int quiet_days)
{
    text t = {0};
    add_code_span(&t, f->test, RT_FLAKY_TEST_NAME_MAX);
    addf(&t,
         " has not failed for %d days: closing. retrig reopens this issue if it fails "
         "again.\n",
         quiet_days);
    return finish(&t);
}

char *rt_flaky_reopen_comment(const rt_flaky_figures *f)
{
    text t = {0};
    add_code_span(&t, f->test, RT_FLAKY_TEST_NAME_MAX);
    addf(&t,
         " is flaky again: it failed on %ld pull requests or branches within %d days. "
         "Reopening.\n",
         f->branches, f->window_days);
    return finish(&t);
}

json_t *rt_flaky_github_issue(const char *title, const char *body, const char *label)
{
    return json_pack("{s:s, s:s, s:[s]}", "title", title, "body", body, "labels", label);
}

int rt_flaky_bugzilla_component(const rt_strlist *map, const char *test, char *product,
                                size_t product_size, char *component, size_t component_size)
{
    for (size_t i = 0; i < map->count; i++) {
        const char *item = map->items[i], *eq = strchr(item, '=');
        if (!eq) continue;
        size_t prefix_len = (size_t)(eq - item);
        bool any = prefix_len == 1 && item[0] == '*';
        if (!any && strncmp(test, item, prefix_len) != 0) continue;
        const char *sep = strstr(eq + 1, "::");
        if (!sep) continue;
        snprintf(product, product_size, "%.*s", (int)(sep - eq - 1), eq + 1);
        snprintf(component, component_size, "%s", sep + 2);
        return RT_OK;
    }
    return RT_ENOTFOUND;
}

json_t *rt_flaky_bugzilla_bug(const char *product, const char *component, const char *title,
                              const char *body, const rt_strlist *keywords, const char *marker)
{
    json_t *kw = json_array();
    for (size_t i = 0; kw && i < keywords->count; i++)
        if (json_array_append_new(kw, json_string(keywords->items[i])) != 0) {
            json_decref(kw);
            kw = NULL;
        }
    if (!kw) return NULL;
    char whiteboard[RT_FLAKY_MARKER_SIZE + 2];
    snprintf(whiteboard, sizeof whiteboard, "[%s]", marker);
    /* version, op_sys and platform are (defaulted) fields: set, for Bugzillas without defaults */
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:s}", "product", product,
                     "component", component, "summary", title, "version", "unspecified", "op_sys",
                     "Unspecified", "platform", "Unspecified", "type", "defect", "keywords", kw,
                     "whiteboard", whiteboard, "description", body);
}
