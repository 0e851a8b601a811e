/* SPDX-License-Identifier: MPL-2.0 */
/* report.c - `retrig report`: the flaky-test dashboard of a project as one self-contained
 * HTML page (no network, no server): the most flaky tests with runs, failures, failure
 * rate, breadth across pushes and branches, first failure and a chart of the daily failure
 * rate, for the main branches only and for all branches, with a toggle between the two.
 * Both views are written into the page, so it reads without JavaScript too; the toggle
 * only shows one and hides the other. Read-only on the database. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/io/pg.h"

#define CHART_WIDTH  160
#define CHART_HEIGHT 28

/* The per-day rollup (history_test_days, migrations/0020): UTC days from the window's first
 * to the one holding until. */
static const char SQL_DAILY[] =
    "SELECT to_char(d.day, 'YYYY-MM-DD'), sum(d.runs), sum(d.failures),"
    " coalesce(sum(d.runs) FILTER (WHERE d.branch_class = 'main'), 0),"
    " coalesce(sum(d.failures) FILTER (WHERE d.branch_class = 'main'), 0)"
    " FROM history_test_days($1, $2, (($3::timestamptz - $4::interval) AT TIME ZONE 'UTC')::date,"
    " ($3::timestamptz AT TIME ZONE 'UTC' - interval '1 microsecond')::date + 1) d"
    " GROUP BY d.day ORDER BY d.day";

static const char PAGE_HEAD[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>%s</title>\n<style>\n"
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n"
    "h1{font-size:1.4em;margin:0 0 .2em}p.meta{color:#666;margin:0 0 1em}\n"
    "table{border-collapse:collapse;width:100%%}th,td{padding:.3em .5em;border-bottom:1px solid "
    "#ddd;"
    "text-align:left;vertical-align:top}\n"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4}\n"
    "td.test{font-family:monospace;word-break:break-all}.flaky{color:#b00;font-weight:bold}\n"
    ".toggle{margin:0 0 1em}.toggle label{margin-right:1.5em}\n"
    "svg.chart polyline{fill:none;stroke:#b00;stroke-width:1.5}svg.chart{background:#fafafa}\n"
    "small{color:#666}\n"
    "</style>\n</head>\n<body>\n";

static const char PAGE_SCRIPT[] =
    "<script>\n"
    "(function () {\n"
    "  function show() {\n"
    "    var main = document.getElementById('scope-main').checked;\n"
    "    document.getElementById('view-main').hidden = !main;\n"
    "    document.getElementById('view-all').hidden = main;\n"
    "  }\n"
    "  document.getElementById('scope-main').addEventListener('change', show);\n"
    "  document.getElementById('scope-all').addEventListener('change', show);\n"
    "  show();\n"
    "})();\n"
    "</script>\n";

static void usage(FILE *out)
{
    fprintf(out, "usage: retrig report --project P --out FILE [--window 30d] [--until ISO-8601]\n"
                 "                     [--min-branches N] [--limit N]\n"
                 "Writes the flaky-test dashboard of P (see retrig flakes) as one self-contained\n"
                 "HTML page, with a toggle between main branches only and all branches.\n"
                 "Exit: 0 written, 1 database or file error, 2 usage.\n");
}

static void html(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* The daily failure rate as an SVG polyline, with the figures in its title. */
static int chart(FILE *f, rt_pg *pg, const rt__flakes_query *q, const char *test, bool main_only)
{
    const char *params[] = {q->project, test, q->until, q->window};
    PGresult *res = NULL;
    if (rt_pg_exec(pg, SQL_DAILY, 4, params, &res) != RT_OK) {
        rt__cli_db_error(pg, "cannot query the daily failure rates");
        return 1;
    }
    int n = PQntuples(res);
    fprintf(f,
            "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "role=\"img\"><title>",
            CHART_WIDTH, CHART_HEIGHT, CHART_WIDTH, CHART_HEIGHT);
    for (int r = 0; r < n; r++) {
        long long runs = atoll(PQgetvalue(res, r, main_only ? 3 : 1));
        long long fails = atoll(PQgetvalue(res, r, main_only ? 4 : 2));
        fprintf(f, "%s%s: %lld/%lld", r ? "; " : "", PQgetvalue(res, r, 0), fails, runs);
    }
    fputs("</title><polyline points=\"", f);
    for (int r = 0; r < n; r++) {
        long long runs = atoll(PQgetvalue(res, r, main_only ? 3 : 1));
        long long fails = atoll(PQgetvalue(res, r, main_only ? 4 : 2));
        double rate = runs ? (double)fails / (double)runs : 0;
        double x = n > 1 ? (double)r * (CHART_WIDTH - 4) / (n - 1) + 2 : CHART_WIDTH / 2.0;
        fprintf(f, "%s%.1f,%.1f", r ? " " : "", x, 2 + (1 - rate) * (CHART_HEIGHT - 4));
    }
    fputs("\"/></svg>", f);
    PQclear(res);
    return 0;
}

static int view(FILE *f, rt_pg *pg, const rt__flakes_query *q, json_t *rows, const char *id,
                const char *caption)
{
    fprintf(f, "<section id=\"view-%s\" data-scope=\"%s\">\n<h2>%s</h2>\n", id, id, caption);
    if (!json_array_size(rows)) {
        fputs("<p class=\"empty\">No failing test in this window.</p>\n</section>\n", f);
        return 0;
    }
    fputs("<table>\n<thead><tr><th>test</th><th>flaky</th><th>runs</th><th>failures</"
          "th><th>failure rate</th>"
          "<th>branches / PRs failed on</th><th>pushes failed on</th><th>chance a push sees it</th>"
          "<th>first failure</th><th>daily failure rate</th></tr></thead>\n<tbody>\n",
          f);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *test = json_string_value(json_object_get(row, "test"));
        bool flaky = json_is_true(json_object_get(row, "flaky"));
        fprintf(f, "<tr data-test=\"");
        html(f, test);
        fprintf(f, "\"><td class=\"test\">");
        html(f, test);
        fprintf(f, "</td><td class=\"%s\">%s</td>", flaky ? "flaky" : "", flaky ? "flaky" : "-");
        fprintf(f,
                "<td class=\"n runs\">%lld</td><td class=\"n failures\">%lld</td><td class=\"n "
                "rate\">%.1f%%</td>",
                (long long)json_integer_value(json_object_get(row, "runs")),
                (long long)json_integer_value(json_object_get(row, "failures")),
                100.0 * json_real_value(json_object_get(row, "failure_rate")));
        fprintf(f,
                "<td class=\"n branches\">%lld</td><td class=\"n pushes\">%lld of %lld</td><td "
                "class=\"n chance\">%.1f%%</td>",
                (long long)json_integer_value(json_object_get(row, "branches")),
                (long long)json_integer_value(json_object_get(row, "pushes_failed")),
                (long long)json_integer_value(json_object_get(row, "pushes")),
                100.0 * json_real_value(json_object_get(row, "push_failure_chance")));
        json_t *first = json_object_get(row, "first_failure");
        fputs("<td class=\"first\">", f);
        if (json_is_object(first)) {
            html(f, json_string_value(json_object_get(first, "time")));
            fputs("<br><small>", f);
            html(f, json_string_value(json_object_get(first, "branch")));
            const char *push = json_string_value(json_object_get(first, "push"));
            const char *rev = json_string_value(json_object_get(first, "revision"));
            if (push && (!rev || strcmp(push, rev) != 0)) {
                fputs(" push ", f);
                html(f, push);
            }
            fputs(" ", f);
            fprintf(f, "%.12s", rev ? rev : "");
            fputs("</small>", f);
        } else {
            fputs("-", f);
        }
        fputs("</td><td>", f);
        if (chart(f, pg, q, test, !strcmp(id, "main")) != 0) return 1;
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody>\n</table>\n</section>\n", f);
    return 0;
}

int rt_cli_report(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"project", required_argument, NULL, 'p'},
        {"out", required_argument, NULL, 'o'},
        {"window", required_argument, NULL, 'w'},
        {"until", required_argument, NULL, 'u'},
        {"min-branches", required_argument, NULL, 'n'},
        {"limit", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    rt__flakes_query q = {.window = "30 days",
                          .until = "now",
                          .min_branches = cfg->history_flaky_min_branches,
                          .flaky_window_days = cfg->history_flaky_window_days,
                          .limit = 50};
    const char *out_path = NULL;
    char window[64];
    int c;
    while ((c = getopt_long(argc, argv, "p:o:w:u:n:l:h", options, NULL)) != -1) {
        switch (c) {
        case 'p': q.project = optarg; break;
        case 'o': out_path = optarg; break;
        case 'w':
            if (rt__cli_parse_duration(optarg, window, sizeof window) != 0) {
                rt_log_error("--window wants a number and h, d or w", "value", optarg);
                return 2;
            }
            q.window = window;
            break;
        case 'u': q.until = optarg; break;
        case 'n': q.min_branches = atoi(optarg); break;
        case 'l': q.limit = atoi(optarg); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!q.project || !out_path || optind < argc || q.limit <= 0 || q.min_branches < 0) {
        usage(stderr);
        return 2;
    }
    int status = 1;
    rt_pg *pg = NULL;
    json_t *all = NULL, *main_rows = NULL;
    FILE *f = NULL;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
    if (rt__cli_connect_read(cfg, "cli", &pg) != 0) goto out;
    if (!(all = rt__cli_flakes(pg, &q))) goto out;
    q.main_only = true;
    if (!(main_rows = rt__cli_flakes(pg, &q))) goto out;
    q.main_only = false;
    if (!(f = fopen(tmp, "w"))) {
        rt_log_error("cannot write the report", "file", tmp);
        goto out;
    }
    char title[512], generated[32];
    snprintf(title, sizeof title, "Flaky tests of %s", q.project);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(generated, sizeof generated, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fputs("<!-- SPDX-License-Identifier: MPL-2.0 -->\n", f);
    fprintf(f, PAGE_HEAD, "retrig: flaky tests"); /* the title is escaped below, in the body */
    fputs("<h1>", f);
    html(f, title);
    fputs("</h1>\n<p class=\"meta\">Window: ", f);
    html(f, q.window);
    fputs(" until ", f);
    html(f, q.until);
    fprintf(
        f,
        ". Flaky: failed on more than %d branches or pull requests within %d days, on any branch. "
        "Generated %s by retrig.</p>\n",
        q.min_branches, q.flaky_window_days, generated);
    fputs("<div class=\"toggle\" role=\"radiogroup\" aria-label=\"branches\">"
          "<label><input type=\"radio\" name=\"scope\" id=\"scope-all\" value=\"all\" checked> all "
          "branches</label>"
          "<label><input type=\"radio\" name=\"scope\" id=\"scope-main\" value=\"main\"> main "
          "only</label></div>\n",
          f);
    if (view(f, pg, &q, all, "all", "All branches") != 0) goto out;
    q.main_only = true;
    if (view(f, pg, &q, main_rows, "main", "Main branches only") != 0) goto out;
    fputs(PAGE_SCRIPT, f);
    fputs("</body>\n</html>\n", f);
    if (fclose(f) != 0) {
        f = NULL;
        rt_log_error("cannot write the report", "file", tmp);
        goto out;
    }
    f = NULL;
    if (rename(tmp, out_path) != 0) {
        rt_log_error("cannot write the report", "file", out_path);
        goto out;
    }
    printf("%s: %zu tests (all branches), %zu (main only)\n", out_path, json_array_size(all),
           json_array_size(main_rows));
    status = 0;
out:
    if (f) {
        fclose(f);
        remove(tmp);
    }
    json_decref(all);
    json_decref(main_rows);
    rt_pg_free(pg);
    return status;
}
