/* SPDX-License-Identifier: MPL-2.0 */
/* html.c - escaping, links and the page frame shared by the pages of `retrig report`
 * (html.h). Every byte that comes from the database or the configuration goes through
 * rt__html, rt__html_cut, rt__html_query_value or rt__html_json. */
#include "cli/html.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void escape_n(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(s[i], f);
        }
    }
}

void rt__html(FILE *f, const char *text)
{
    if (text) escape_n(f, text, strlen(text));
}

/* Writes at most max bytes of text, cut at a character boundary; true when cut. */
static bool prefix(FILE *f, const char *text, size_t max)
{
    if (!text) return false;
    size_t len = strnlen(text, max + 1);
    if (len <= max) {
        escape_n(f, text, len);
        return false;
    }
    size_t cut = max;
    while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80) cut--; /* not mid-character */
    escape_n(f, text, cut);
    return true;
}

void rt__html_cut(FILE *f, const char *text, size_t max)
{
    if (prefix(f, text, max)) fputs("…", f);
}

void rt__html_prefix(FILE *f, const char *text, size_t max) { (void)prefix(f, text, max); }

void rt__html_query_value(FILE *f, const char *text)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~')
            fputc(*p, f);
        else
            fprintf(f, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
    }
}

bool rt__html_safe_base_url(const char *url)
{
    if (!url || (strncmp(url, "https://", 8) != 0 && strncmp(url, "http://", 7) != 0)) return false;
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p <= ' ' || *p >= 0x7f || strchr("\"'<>`\\", *p)) return false;
    return true;
}

void rt__html_base_url(FILE *f, const char *base)
{
    size_t len = strlen(base);
    while (len > 0 && base[len - 1] == '/') len--;
    escape_n(f, base, len);
}

void rt__html_treeherder_link(FILE *f, const char *base, const char *project, const char *revision,
                              const char *task_id, int run_id)
{
    fputs("<a class=\"th\" href=\"", f);
    rt__html_base_url(f, base);
    fputs("/jobs?repo=", f);
    rt__html_query_value(f, project);
    fputs("&amp;revision=", f);
    rt__html_query_value(f, revision);
    if (task_id) {
        fputs("&amp;selectedTaskRun=", f);
        rt__html_query_value(f, task_id);
        fprintf(f, "-%d", run_id);
    }
    fputs("\">", f);
}

void rt__html_json(FILE *f, const json_t *doc)
{
    char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
    if (!text) {
        fputs("null", f);
        return;
    }
    for (const char *p = text; *p; p++) {
        /* < > & appear only inside JSON strings, where \u escapes mean the same */
        if (*p == '<')
            fputs("\\u003c", f);
        else if (*p == '>')
            fputs("\\u003e", f);
        else if (*p == '&')
            fputs("\\u0026", f);
        else
            fputc(*p, f);
    }
    free(text);
}

void rt__html_when(FILE *f, const char *iso)
{
    if (!iso || strlen(iso) < 16 || iso[10] != 'T') {
        rt__html(f, iso && *iso ? iso : "–");
        return;
    }
    rt__html_prefix(f, iso, 10);
    fputc(' ', f);
    rt__html_prefix(f, iso + 11, 5);
}

void rt__html_count(FILE *f, long long n)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%lld", n < 0 ? -n : n);
    if (n < 0) fputc('-', f);
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0) fputc(',', f);
        fputc(digits[i], f);
    }
}

void rt__html_page_start(FILE *f, const char *title, const char *current, const char *other_href,
                         const char *subtitle)
{
    char generated[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(generated, sizeof generated, "%Y-%m-%d %H:%M UTC", gmtime_r(&now, &tm));
    fputs("<!DOCTYPE html>\n<!-- SPDX-License-Identifier: MPL-2.0 -->\n<html lang=\"en\">\n"
          "<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"retrig report\">\n<title>",
          f);
    rt__html(f, title);
    fputs(" · retrig</title>\n<style>\n", f);
    fputs(rt__page_css, f);
    fputs("</style>\n</head>\n<body class=\"page-", f);
    fputs(current, f);
    fputs("\">\n<header class=\"top\">\n<div class=\"brand\">retrig</div>\n<nav>", f);
    bool flaky = !strcmp(current, "flaky");
    const char *labels[2] = {"Flaky tests", "Decisions"};
    for (int i = 0; i < 2; i++) {
        bool here = flaky == (i == 0);
        if (here) {
            fprintf(f, "<span class=\"tab current\" aria-current=\"page\">%s</span>", labels[i]);
        } else if (other_href) {
            fputs("<a class=\"tab\" href=\"", f);
            rt__html(f, other_href);
            fprintf(f, "\">%s</a>", labels[i]);
        }
    }
    fputs("</nav>\n<div class=\"generated\">generated ", f);
    fputs(generated, f);
    fputs("</div>\n</header>\n<main>\n<h1>", f);
    rt__html(f, title);
    fputs("</h1>\n<p class=\"subtitle\">", f);
    rt__html(f, subtitle);
    fputs("</p>\n", f);
}

void rt__html_page_end(FILE *f, const char *script)
{
    fputs("</main>\n<script>\n", f);
    fputs(script, f);
    fputs("</script>\n</body>\n</html>\n", f);
}
