/* SPDX-License-Identifier: MPL-2.0 */
/* html.h - what the two pages of `retrig report` share: escaping (the one place text from
 * the database or the configuration becomes HTML), links to Treeherder, JSON embedded for
 * scripts, the page head with the shared style sheet (cli/pages/pages.css, compiled in), the
 * header linking the pages, and the end of a page with its script. Everything writes to a
 * FILE; nothing here fails (the caller checks the file at fclose). */
#ifndef RETRIG_CLI_HTML_H
#define RETRIG_CLI_HTML_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The compiled-in assets (cli/pages/, embedded by cli/embed.cmake). */
extern const char rt__page_css[];
extern const char rt__flaky_js[];
extern const char rt__decisions_js[];

/* Text or an attribute value: & < > " ' escaped; NULL writes nothing. */
void rt__html(FILE *f, const char *text);
/* The same for at most max bytes of text, cut at a UTF-8 character boundary, with "…" when
 * cut. */
void rt__html_cut(FILE *f, const char *text, size_t max);
/* The same without the "…" (a short revision). */
void rt__html_prefix(FILE *f, const char *text, size_t max);
/* A query parameter's value: percent-encoded (unreserved characters kept), which is also
 * safe in an attribute. */
void rt__html_query_value(FILE *f, const char *text);
/* True when url is an http:// or https:// URL without quotes, spaces or markup: the only
 * base URLs the pages write. */
bool rt__html_safe_base_url(const char *url);
/* A base URL (checked with rt__html_safe_base_url) without its trailing slashes, escaped. */
void rt__html_base_url(FILE *f, const char *base);
/* <a href="BASE/jobs?repo=P&revision=R[&selectedTaskRun=T-N]">, escaped; task NULL for
 * the push. Closed by the caller. */
void rt__html_treeherder_link(FILE *f, const char *base, const char *project, const char *revision,
                              const char *task_id, int run_id);
/* doc as JSON that cannot end the <script> element holding it (< > & escaped). */
void rt__html_json(FILE *f, const json_t *doc);
/* The document up to the end of the page header: title (escaped), the navigation with
 * `current` ("flaky" or "decisions") marked and `other_href` (the other page; NULL: none),
 * the generation time and what the page covers (subtitle, escaped). */
void rt__html_page_start(FILE *f, const char *title, const char *current, const char *other_href,
                         const char *subtitle);
/* The script (one of the assets) and the end of the document. */
void rt__html_page_end(FILE *f, const char *script);
/* "2026-11-30T10:00:00Z" as "2026-11-30 10:00" (escaped; other text as it is, "–" for none). */
void rt__html_when(FILE *f, const char *iso);
/* Thousands separated: 13567 -> "13,567". */
void rt__html_count(FILE *f, long long n);

#endif
