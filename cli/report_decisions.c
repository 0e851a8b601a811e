/* SPDX-License-Identifier: MPL-2.0 */
/* report_decisions.c - `retrig report --decisions`: the sheriffs' page as one
 * self-contained HTML file. Recent verdicts, newest first: retrig-decide's decisions and the
 * infrastructure failures retrig-classify found (no retrigger spent), each expanding to the
 * evidence `retrig explain` prints: the original's failure lines, which retrigger reproduced
 * which line, the cross-branch history beside each line, p_regression when the decision or
 * the line carries it, the retriggers and the action, a regression's culprit search (the
 * push that broke it, or the range that holds it, and its probes); links to Treeherder for
 * the pushes and the jobs. Then the budgets: retriggers per platform and backfills per platform
 * family per day, with the daily limits drawn in, and retrig-perf's backfills. Filters by verdict,
 * project and platform (cli/pages/decisions.js; without JavaScript every row shows).
 * Read-only: the sheriff role suffices. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/html.h"
#include "common/core/limits.h"
#include "common/core/perf_pick.h"
#include "common/io/pg.h"
#include "common/policy.h"
#include "common/store/decisions.h"
#include "common/store/ledger.h"
#include "common/store/perf.h"

#define MAX_ROWS    1000
#define BUDGET_DAYS 14

typedef struct decisions_page {
    const rt_config *cfg;
    const char *treeherder;
    const char *perfherder;
    const char *link;       /* --link, or NULL */
    const char *since_text; /* the window as asked for ("14d") */
    char until[32], since[32], today[11];
    rt_page_decision *decisions;
    size_t ndecisions;
    rt_page_infra *infra;
    size_t ninfra;
    rt_page_member *members;
    size_t nmembers;
    rt_page_action *actions;
    size_t nactions;
    rt_ledger_day *budget;
    size_t nbudget;
    rt_perf_recent *perf;
    size_t nperf;
} decisions_page;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig report --decisions --out FILE [--since 14d] [--until ISO-8601]\n"
            "                     [--link HREF] [--treeherder URL]\n"
            "Writes the sheriffs' page as one self-contained HTML file: the verdicts of the\n"
            "window (newest first, at most 1000), each expanding to its evidence (failure\n"
            "lines, which retrigger reproduced which, the history of each line, p_regression\n"
            "when stored), links to Treeherder, the retrigger and backfill budgets per day with\n"
            "their limits, and retrig-perf's backfills. --link adds a link to the flaky-test\n"
            "page; --treeherder (default treeherder_url) is where links point.\n"
            "Exit: 0 written, 1 database or file error, 2 usage.\n");
}

static long long int_of(json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

static long long seconds_between(const char *a, const char *b)
{
    struct tm x = {0}, y = {0};
    if (!a || !b || !strptime(a, "%Y-%m-%dT%H:%M:%SZ", &x) ||
        !strptime(b, "%Y-%m-%dT%H:%M:%SZ", &y))
        return -1;
    return (long long)(timegm(&y) - timegm(&x));
}

static void duration(FILE *f, long long s)
{
    if (s < 0) return;
    if (s < 120)
        fprintf(f, "%lld s", s);
    else if (s < 7200)
        fprintf(f, "%lld min", s / 60);
    else
        fprintf(f, "%.1f h", (double)s / 3600.0);
}

/* The decision's p_regression (a column a later migration adds, or the evidence's). */
static json_t *p_regression(json_t *row, json_t *evidence)
{
    json_t *p = json_object_get(row, "p_regression");
    if (!json_is_number(p)) p = json_object_get(evidence, "p_regression");
    return json_is_number(p) ? p : NULL;
}

static void probability(FILE *f, json_t *p)
{
    double v = json_number_value(p);
    if (v < 0) v = 0;
    if (v > 1) v = 1;
    fprintf(f, "<span class=\"pbar\"><i style=\"width:%.0f%%\"></i></span>%.3f", v * 100, v);
}

static void task_link(FILE *f, const decisions_page *p, const char *project, const char *revision,
                      const char *task_id, int run_id)
{
    if (p->treeherder)
        rt__html_treeherder_link(f, p->treeherder, project, revision, task_id, run_id);
    fputs("<span class=\"mono\">", f);
    rt__html(f, task_id);
    fputs("</span>", f);
    if (p->treeherder) fputs("</a>", f);
}

/* The history of a line at decision time (lines[].history), in words. */
static void history_text(FILE *f, json_t *h)
{
    if (!json_is_object(h)) {
        fputs("<span class=\"muted\">no history recorded</span>", f);
        return;
    }
    fprintf(f, "%lld days, other pushes: ", int_of(h, "window_days"));
    if (!int_of(h, "runs")) {
        fputs("no run recorded", f);
    } else if (!int_of(h, "pushes")) {
        fprintf(f, "never failed in %lld runs", int_of(h, "runs"));
    } else {
        fprintf(f,
                "failed on %lld push%s (%lld on main, %lld with this line), %lld branch%s, %lld "
                "PR%s; %lld failures in %lld runs",
                int_of(h, "pushes"), int_of(h, "pushes") == 1 ? "" : "es", int_of(h, "main_pushes"),
                int_of(h, "same_signature_pushes"), int_of(h, "branches"),
                int_of(h, "branches") == 1 ? "" : "es", int_of(h, "prs"),
                int_of(h, "prs") == 1 ? "" : "s", int_of(h, "failures"), int_of(h, "runs"));
    }
    if (json_is_true(json_object_get(h, "flaky"))) fputs(" · <span class=\"flag\">flaky</span>", f);
    json_t *first = json_object_get(h, "first_failure");
    if (json_is_object(first)) {
        fputs("<br>first failed ", f);
        rt__html_when(f, json_string_value(json_object_get(first, "at")));
        fputs(" on ", f);
        rt__html(f, json_string_value(json_object_get(first, "project")));
        fputs(" push ", f);
        rt__html(f, json_string_value(json_object_get(first, "push")));
    }
}

/* The lines of the original against the retriggers: a square per retrigger, filled when it
 * reproduced the line. */
static void lines_table(FILE *f, json_t *evidence, bool any_line_p)
{
    json_t *lines = json_object_get(evidence, "lines"), *runs = json_object_get(evidence, "runs");
    long long compared = int_of(json_object_get(evidence, "counts"), "compared");
    if (!json_array_size(lines)) {
        fputs("<p class=\"empty\">No failure line of the original to compare.</p>", f);
        return;
    }
    fputs("<table><thead><tr><th>failure line of the original</th><th>retriggers that "
          "reproduced it</th><th>history of the line</th>",
          f);
    if (any_line_p) fputs("<th>p_regression</th>", f);
    fputs("</tr></thead><tbody>", f);
    size_t i, k;
    json_t *line, *run;
    json_array_foreach(lines, i, line)
    {
        fputs("<tr><td class=\"line\">", f);
        rt__html_cut(f, json_string_value(json_object_get(line, "line")), 1000);
        fputs("</td><td><span class=\"repro\">", f);
        json_t *by = json_object_get(line, "reproduced_by");
        json_array_foreach(runs, k, run)
        {
            const char *task = json_string_value(json_object_get(run, "task_id"));
            bool yes = false;
            size_t j;
            json_t *t;
            json_array_foreach(by, j, t) if (task && json_is_string(t) &&
                                             !strcmp(json_string_value(t), task)) yes = true;
            const char *state = json_string_value(json_object_get(run, "evidence"));
            fprintf(f, "<i class=\"%s\" title=\"",
                    yes                                  ? "yes"
                    : state && !strcmp(state, "pending") ? "pending"
                                                         : "no");
            rt__html(f, task);
            fputs(yes ? ": reproduced\"></i>" : ": did not reproduce\"></i>", f);
        }
        fprintf(f, "</span> %lld of %lld</td><td class=\"history\">", int_of(line, "reproduced"),
                compared);
        history_text(f, json_object_get(line, "history"));
        fputs("</td>", f);
        if (any_line_p) {
            fputs("<td>", f);
            json_t *pr = json_object_get(line, "p_regression");
            if (json_is_number(pr))
                probability(f, pr);
            else
                fputs("–", f);
            fputs("</td>", f);
        }
        fputs("</tr>", f);
    }
    fputs("</tbody></table>", f);
}

/* decide_policy = pooled: the pooled verdict the decision took, every configuration of the
 * push where the test ran in one table (evidence.pool, stored by retrig-decide). */
static void pool_table(FILE *f, json_t *evidence, const char *set_id)
{
    json_t *pool = json_object_get(evidence, "pool");
    if (!json_is_object(pool)) return;
    fputs("<h3>The pooled verdict: every configuration of the push where ", f);
    rt__html_cut(f, json_string_value(json_object_get(pool, "test")), 300);
    fputs(" ran</h3><p>", f);
    rt__html(f, json_string_value(json_object_get(pool, "verdict")));
    fputs(" (", f);
    rt__html(f, json_string_value(json_object_get(pool, "reason")));
    fputs("), p_regression ", f);
    probability(f, json_object_get(pool, "p_regression"));
    fprintf(f, " · %lld round(s), %lld retrigger(s) asked for</p>", int_of(pool, "rounds"),
            int_of(pool, "retriggers"));
    fputs("<table><thead><tr><th>configuration</th><th>push run</th><th>retriggers</th>"
          "<th>reproduced</th><th>pending</th><th>set</th></tr></thead><tbody>",
          f);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(pool, "configs"), i, c)
    {
        json_t *set = json_object_get(c, "set_id");
        fputs("<tr><td class=\"mono\">", f);
        rt__html(f, json_string_value(json_object_get(c, "config")));
        fputs("</td><td>", f);
        rt__html(f, json_string_value(json_object_get(c, "push_run")));
        fprintf(f, "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>", int_of(c, "retriggers"),
                int_of(c, "reproduced"), int_of(c, "pending"));
        if (json_is_integer(set))
            fprintf(f, "<a href=\"#set-%lld\">%lld</a>%s", (long long)json_integer_value(set),
                    (long long)json_integer_value(set),
                    json_integer_value(set) == atoll(set_id) ? " (this one)" : "");
        else
            fputs("test history", f);
        fputs("</td></tr>", f);
    }
    fputs("</tbody></table>", f);
}

static void retriggers_table(FILE *f, const decisions_page *p, size_t d, json_t *evidence)
{
    const char *set_id = p->decisions[d].set_id, *project = p->decisions[d].project,
               *revision = p->decisions[d].revision;
    json_t *runs = json_object_get(evidence, "runs");
    fputs("<table><thead><tr><th>run</th><th>task</th><th>state</th><th>what retrig-decide "
          "read</th><th>reproduced a line</th><th>Treeherder job</th></tr></thead><tbody>",
          f);
    int shown = 0;
    for (size_t m = 0; m < p->nmembers; m++) {
        if (strcmp(p->members[m].set_id, set_id) != 0) continue;
        const char *task = p->members[m].task_id;
        json_t *found = NULL, *run;
        size_t k;
        json_array_foreach(runs, k, run)
        {
            const char *t = json_string_value(json_object_get(run, "task_id"));
            if (t && !strcmp(t, task) && int_of(run, "run_id") == atoll(p->members[m].run_id))
                found = run;
        }
        fputs("<tr><td>", f);
        rt__html(f, p->members[m].role);
        fputs("</td><td>", f);
        task_link(f, p, project, revision, task, atoi(p->members[m].run_id));
        fputs("</td><td>", f);
        rt__html(f, p->members[m].state);
        if (p->members[m].result[0]) {
            fputs(" · ", f);
            rt__html(f, p->members[m].result);
        }
        fputs("</td><td>", f);
        rt__html(f, found ? json_string_value(json_object_get(found, "evidence")) : "–");
        if (found && json_is_integer(json_object_get(found, "lines")))
            fprintf(f, " (%lld lines)", int_of(found, "lines"));
        fputs("</td><td>", f);
        fputs(!found ? "–" : json_is_true(json_object_get(found, "reproduced")) ? "yes" : "no", f);
        fputs("</td><td>", f);
        if (found && json_is_integer(json_object_get(found, "job_id")))
            fprintf(f, "%lld", int_of(found, "job_id"));
        else
            fputs("–", f);
        fputs("</td></tr>", f);
        shown++;
    }
    fputs("</tbody></table>", f);
    if (!shown) fputs("<p class=\"empty\">No run of the set recorded.</p>", f);
}

static void action_text(FILE *f, const decisions_page *p, const char *set_id)
{
    for (size_t a = 0; a < p->nactions; a++) {
        if (strcmp(p->actions[a].set_id, set_id) != 0) continue;
        fputs("<p class=\"small\">retrigger action <b>", f);
        rt__html(f, p->actions[a].action_name);
        fputs("</b>: ", f);
        rt__html(f, p->actions[a].outcome);
        if (p->actions[a].dry_run) fputs(" (dry run: nothing sent)", f);
        if (p->actions[a].action_task_id[0]) {
            fputs(", action task <span class=\"mono\">", f);
            rt__html(f, p->actions[a].action_task_id);
            fputs("</span>", f);
        }
        if (p->actions[a].error[0]) {
            fputs("; error: ", f);
            rt__html_cut(f, p->actions[a].error, 400);
        }
        fputs("</p>", f);
    }
}

static void summary_row(FILE *f, const decisions_page *p, const char *decided, const char *verdict,
                        const char *project, const char *platform, const char *label,
                        const char *reason, const char *reproduced, const char *revision)
{
    fputs("<summary><span class=\"caret\">", f);
    rt__html_when(f, decided);
    fprintf(f, "</span><span class=\"verdict %s\">", verdict);
    rt__html(f, verdict);
    fputs("</span><span>", f);
    rt__html(f, project);
    fputs("</span><span class=\"mono small\">", f);
    rt__html(f, platform);
    fputs("</span><span class=\"label\">", f);
    rt__html(f, label);
    fputs("</span><span class=\"small\">", f);
    rt__html(f, reason);
    fputs("</span><span>", f);
    fputs(reproduced, f); /* built from numbers */
    fputs("</span><span>", f);
    if (p->treeherder && revision[0]) {
        rt__html_treeherder_link(f, p->treeherder, project, revision, NULL, 0);
        fputs("push ↗</a>", f);
    }
    fputs("</span></summary>\n", f);
}

/* A push's revision, linked to its Treeherder page when there is a base URL. */
static void push_link(FILE *f, const decisions_page *p, const char *project, const char *revision)
{
    if (p->treeherder) rt__html_treeherder_link(f, p->treeherder, project, revision, NULL, 0);
    fputs("<span class=\"mono\">", f);
    rt__html(f, revision);
    fputs("</span>", f);
    if (p->treeherder) fputs(" ↗</a>", f);
}

/* The culprit search of a regression (the decision row's culprit_* columns, issue 24): which
 * push broke it, or the range that holds it and why the search stopped, and its probes. */
static void culprit_text(FILE *f, const decisions_page *p, const char *project, json_t *row)
{
    const char *status = json_string_value(json_object_get(row, "culprit_status"));
    if (!status) return; /* no search: not a regression, or not a culprit_projects project */
    const char *reason = json_string_value(json_object_get(row, "culprit_reason"));
    const char *culprit = json_string_value(json_object_get(row, "culprit_revision"));
    const char *first = json_string_value(json_object_get(row, "culprit_range_first"));
    const char *last = json_string_value(json_object_get(row, "culprit_range_last"));
    const char *author = json_string_value(json_object_get(row, "culprit_author"));
    json_t *probes = json_object_get(row, "culprit_probes");
    fputs("<div class=\"culprit\"><h3>Which push broke it</h3>\n<p>culprit search <b>", f);
    rt__html(f, status);
    fputs("</b>", f);
    if (reason) {
        fputs(" (", f);
        rt__html(f, reason);
        fputs(")", f);
    }
    if (culprit) {
        fputs(": culprit ", f);
        push_link(f, p, project, culprit);
        json_t *pushlog = json_object_get(row, "culprit_pushlog_id");
        if (json_is_integer(pushlog))
            fprintf(f, ", pushlog %lld", (long long)json_integer_value(pushlog));
        if (author && author[0]) {
            fputs(", by ", f);
            rt__html(f, author);
        }
    } else if (first && !strcmp(status, "culprit-before-window")) {
        fputs(": the culprit is ", f); /* the window's first push reproduces too */
        push_link(f, p, project, first);
        fputs(" or a push before it", f);
    } else if (first && last) {
        fputs(!strcmp(status, "searching") ? ": searching " : ": the culprit is within ", f);
        push_link(f, p, project, first);
        fputs(" .. ", f);
        push_link(f, p, project, last);
    }
    fprintf(f, " · %zu probe(s), %lld job(s) spent</p>\n", json_array_size(probes),
            int_of(row, "culprit_jobs_spent"));
    if (!json_array_size(probes)) {
        fputs("</div>\n", f);
        return;
    }
    fputs("<table class=\"small\"><tr><th>round</th><th>push probed</th><th>runs asked</th>"
          "<th>ran</th><th>reproduced</th><th>class</th></tr>",
          f);
    size_t i;
    json_t *probe;
    json_array_foreach(probes, i, probe)
    {
        const char *revision = json_string_value(json_object_get(probe, "revision"));
        fprintf(f, "<tr><td>%lld</td><td>", int_of(probe, "round"));
        if (revision) push_link(f, p, project, revision);
        fprintf(f, "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>", int_of(probe, "times"),
                int_of(probe, "runs"), int_of(probe, "reproduced"));
        rt__html(f, json_string_value(json_object_get(probe, "class")));
        fputs("</td></tr>", f);
    }
    fputs("</table></div>\n", f);
}

/* Long because it writes one decision's row and its expanded evidence (runs, lines, policy,
 * culprit) in page order, each part a few lines of HTML. */
static void decision_item(FILE *f, const decisions_page *p, size_t d)
{
    const char *verdict = p->decisions[d].verdict, *project = p->decisions[d].project,
               *revision = p->decisions[d].revision, *platform = p->decisions[d].platform;
    json_t *evidence = json_loads(p->decisions[d].evidence, 0, NULL);
    json_t *row = json_loads(p->decisions[d].row, 0, NULL);
    json_t *counts = json_object_get(evidence, "counts");
    long long best = 0;
    bool any_line_p = false;
    size_t i;
    json_t *line;
    json_array_foreach(json_object_get(evidence, "lines"), i, line)
    {
        if (int_of(line, "reproduced") > best) best = int_of(line, "reproduced");
        if (json_is_number(json_object_get(line, "p_regression"))) any_line_p = true;
    }
    char reproduced[64];
    snprintf(reproduced, sizeof reproduced, "%lld of %lld", best, int_of(counts, "compared"));
    fputs("<details class=\"decision\" data-verdict=\"", f);
    rt__html(f, verdict);
    fputs("\" data-project=\"", f);
    rt__html(f, project);
    fputs("\" data-platform=\"", f);
    rt__html(f, platform);
    fprintf(f, "\" id=\"set-%s\">", p->decisions[d].set_id);
    summary_row(f, p, p->decisions[d].decided_at, verdict, project, platform, p->decisions[d].label,
                p->decisions[d].reason, reproduced, revision);
    fputs("<div class=\"evidence\"><div class=\"timeline\"><span>failure seen ", f);
    rt__html_when(f, p->decisions[d].failure_seen_at);
    fputs("</span><span>retriggers requested ", f);
    rt__html_when(f, p->decisions[d].retriggers_requested_at);
    fputs("</span><span>decided ", f);
    rt__html_when(f, p->decisions[d].decided_at);
    fputs(" (", f);
    duration(f, seconds_between(p->decisions[d].failure_seen_at, p->decisions[d].decided_at));
    fputs(" after the failure)</span></div>\n", f);
    fputs("<p>Original: ", f);
    task_link(f, p, project, revision, p->decisions[d].original_task_id,
              atoi(p->decisions[d].original_run_id));
    fputs(" on <span class=\"mono\">", f);
    rt__html(f, revision);
    fputs("</span>", f);
    if (p->decisions[d].classification_id[0]) {
        fputs(" · Treeherder classification ", f);
        rt__html(f, p->decisions[d].classification_id);
        fputs(" when decided", f);
    }
    fprintf(f,
            " · threshold %lld: %lld retriggers asked, %lld compared (%lld passed, %lld "
            "failed), %lld exception, %lld without data, %lld pending",
            int_of(evidence, "threshold"), p->decisions[d].retrigger_count,
            int_of(counts, "compared"), int_of(counts, "passed"), int_of(counts, "failed"),
            int_of(counts, "exceptions"), int_of(counts, "no_data"), int_of(counts, "pending"));
    json_t *pr = p_regression(row, evidence);
    if (pr) {
        fputs("<br>p_regression ", f);
        probability(f, pr);
    }
    /* Other columns a later migration adds to decisions (policy, shadow verdicts, ...). */
    const char *key;
    json_t *v;
    static const char *const known[] = {"set_id",          "verdict",
                                        "reason",          "classification_id",
                                        "failure_seen_at", "retriggers_requested_at",
                                        "decided_at",      "p_regression"};
    json_object_foreach(row, key, v)
    {
        bool seen = false;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            if (!strcmp(key, known[k])) seen = true;
        if (seen || json_is_null(v)) continue;
        if (!strncmp(key, "culprit", 7)) continue; /* the culprit search: culprit_text */
        char *text = json_is_string(v) ? strdup(json_string_value(v))
                                       : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        fputs("<br><span class=\"muted\">", f);
        rt__html(f, key);
        fputs("</span> ", f);
        rt__html_cut(f, text, 300);
        free(text);
    }
    fputs("</p>\n<h3>Failure lines of the original, and which retriggers reproduced them</h3>", f);
    lines_table(f, evidence, any_line_p);
    json_array_foreach(json_object_get(evidence, "tracked"), i, line)
    {
        fprintf(f, "<p class=\"small\">dropped (single tracking bug %lld): ", int_of(line, "bug"));
        rt__html_cut(f, json_string_value(json_object_get(line, "line")), 600);
        fputs("</p>", f);
    }
    pool_table(f, evidence, p->decisions[d].set_id);
    fputs("<h3>The runs of the set</h3>", f);
    retriggers_table(f, p, d, evidence);
    action_text(f, p, p->decisions[d].set_id);
    culprit_text(f, p, project, row);
    json_t *cancelled = json_object_get(evidence, "cancelled");
    if (json_is_object(cancelled))
        fprintf(f,
                "<p class=\"small\">cancelled %lld pending retrigger(s), about %lld s of task "
                "time saved</p>",
                int_of(cancelled, "count"), int_of(cancelled, "estimated_seconds_saved"));
    fputs("</div></details>\n", f);
    json_decref(evidence);
    json_decref(row);
}

static void infra_item(FILE *f, const decisions_page *p, size_t r)
{
    const char *project = p->infra[r].project, *revision = p->infra[r].revision,
               *platform = p->infra[r].platform;
    fputs("<details class=\"decision\" data-verdict=\"infra\" data-project=\"", f);
    rt__html(f, project);
    fputs("\" data-platform=\"", f);
    rt__html(f, platform);
    fputs("\">", f);
    summary_row(f, p, p->infra[r].classified_at, "infra", project, platform, p->infra[r].label,
                p->infra[r].verdict_reason, "–", revision);
    fputs("<div class=\"evidence\"><p>retrig-classify read the run's errorsummary as an "
          "infrastructure failure (",
          f);
    rt__html(f, p->infra[r].verdict_reason);
    fputs("), so no retrigger was spent. Run: ", f);
    task_link(f, p, project, revision, p->infra[r].task_id, atoi(p->infra[r].run_id));
    fputs(", resolved ", f);
    rt__html_when(f, p->infra[r].resolved_at);
    fputs(".</p></div></details>\n", f);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct projects (or platforms) over both lists, as <option>s (escaped). */
static void options_of(FILE *f, const decisions_page *p, bool platform)
{
    json_t *seen = json_object();
    for (size_t i = 0; seen && i < p->ndecisions; i++)
        json_object_set_new(seen, platform ? p->decisions[i].platform : p->decisions[i].project,
                            json_true());
    for (size_t i = 0; seen && i < p->ninfra; i++)
        json_object_set_new(seen, platform ? p->infra[i].platform : p->infra[i].project,
                            json_true());
    /* sorted: jansson keeps insertion order, so sort the keys */
    size_t n = json_object_size(seen), k = 0;
    const char **keys = calloc(n + 1, sizeof *keys);
    const char *key;
    json_t *v;
    json_object_foreach(seen, key, v) if (keys) keys[k++] = key;
    if (keys) qsort(keys, k, sizeof *keys, by_string);
    for (size_t i = 0; keys && i < k; i++) {
        fputs("<option value=\"", f);
        rt__html(f, keys[i]);
        fputs("\">", f);
        rt__html(f, keys[i][0] ? keys[i] : "(none)");
        fputs("</option>", f);
    }
    free(keys);
    json_decref(seen);
}

static void verdict_cards(FILE *f, const decisions_page *p)
{
    static const char *const verdicts[] = {"regression", "intermittent", "infra", "undecided"};
    long long n[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < p->ndecisions; i++)
        for (int v = 0; v < 4; v++) n[v] += !strcmp(p->decisions[i].verdict, verdicts[v]);
    n[2] += p->ninfra;
    fputs("<section class=\"cards\" id=\"summary\">", f);
    for (int v = 0; v < 4; v++) {
        fprintf(f,
                "<div class=\"card\"><div class=\"big verdict %s\">%lld</div><div "
                "class=\"label\">%s</div><div class=\"note\">",
                verdicts[v], n[v], verdicts[v]);
        fputs(v == 0   ? "the failure reproduced in the retriggers"
              : v == 1 ? "it did not reproduce"
              : v == 2 ? "an infrastructure problem, no retrigger spent"
                       : "retrig could not tell",
              f);
        fputs("</div></div>", f);
    }
    long long retriggers = 0, backfills = 0;
    for (size_t i = 0; i < p->nbudget; i++) {
        if (strcmp(p->budget[i].day, p->today) != 0) continue;
        if (!strncmp(p->budget[i].platform, "perf:", 5))
            backfills += p->budget[i].spent;
        else
            retriggers += p->budget[i].spent;
    }
    fprintf(f,
            "<div class=\"card\"><div class=\"big\">%lld</div><div class=\"label\">retriggers "
            "today</div><div class=\"note\">%lld backfill jobs (retrig-perf)</div></div>",
            retriggers, backfills);
    fputs("</section>\n", f);
}

/* One small chart per platform (or family): the spend of each of the last BUDGET_DAYS
 * days as a bar, the daily limit as a dashed line. */
static void budget_cards(FILE *f, const decisions_page *p, bool perf, const rt_perf_options *po)
{
    int shown = 0;
    for (size_t i = 0; i < p->nbudget;) {
        const char *platform = p->budget[i].platform;
        size_t end = i;
        while (end < p->nbudget && !strcmp(p->budget[end].platform, platform)) end++;
        bool is_perf = !strncmp(platform, "perf:", 5);
        if (is_perf != perf) {
            i = end;
            continue;
        }
        int limit = 0;
        if (perf) {
            size_t family = po->nfamilies;
            for (size_t k = 0; k <= po->nfamilies; k++)
                if (!strcmp(rt_perf_family_name(po, k), platform + 5)) family = k;
            limit = po->limit[family];
        } else if (rt_budget_limit_for(&p->cfg->budget_limits, platform, 600, &limit) != RT_OK) {
            limit = 0;
        }
        long long spent[BUDGET_DAYS] = {0}, most = limit, today = 0;
        struct tm t = {0};
        strptime(p->today, "%Y-%m-%d", &t);
        time_t today_at = timegm(&t);
        for (size_t k = i; k < end; k++) {
            struct tm d = {0};
            if (!strptime(p->budget[k].day, "%Y-%m-%d", &d)) continue;
            long long back = (long long)(today_at - timegm(&d)) / 86400;
            if (back < 0 || back >= BUDGET_DAYS) continue;
            spent[BUDGET_DAYS - 1 - back] = p->budget[k].spent;
            if (spent[BUDGET_DAYS - 1 - back] > most) most = spent[BUDGET_DAYS - 1 - back];
            if (back == 0) today = spent[BUDGET_DAYS - 1];
        }
        if (most < 1) most = 1;
        const int w = 16, h = 40, top = 4, width = BUDGET_DAYS * w;
        bool full = limit > 0 && today >= limit;
        fputs("<div class=\"budget-card\"><div class=\"title\">", f);
        rt__html(f, perf ? platform + 5 : platform);
        fprintf(f, "</div><div class=\"today\"><b>%lld</b> of %d %s today%s</div>", today, limit,
                perf ? "jobs" : "retriggers",
                full ? " · <span class=\"full\">limit reached</span>" : "");
        double share = limit > 0 ? (double)today / limit : 0;
        fprintf(f, "<div class=\"gauge%s%s\"><i style=\"width:%.1f%%\"></i></div>",
                perf ? " perf" : "", full ? " full" : "", 100.0 * (share > 1 ? 1 : share));
        fprintf(f,
                "<svg class=\"budget\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "role=\"img\"><title>",
                width, h + 12, width, h + 12);
        rt__html(f, platform);
        fprintf(f, ": spent per day over %d days, limit %d a day</title>", BUDGET_DAYS, limit);
        for (int k = 0; k < BUDGET_DAYS; k++) {
            if (spent[k] <= 0) continue;
            int bh = (int)((double)spent[k] * (h - top) / (double)most + 0.5);
            if (bh < 2) bh = 2;
            fprintf(f,
                    "<rect class=\"bar%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"><title>%lld"
                    "</title></rect>",
                    perf ? " perf" : "", k * w + 2, h - bh, w - 4, bh, spent[k]);
        }
        int ly = h - (int)((double)limit * (h - top) / (double)most + 0.5);
        fprintf(f, "<line class=\"base\" x1=\"0\" y1=\"%d.5\" x2=\"%d\" y2=\"%d.5\"/>", h, width,
                h);
        if (limit > 0)
            fprintf(f, "<line class=\"limit\" x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", ly, width,
                    ly);
        fprintf(f,
                "<text x=\"0\" y=\"%d\">%d days ago</text><text x=\"%d\" y=\"%d\" "
                "text-anchor=\"end\">today</text></svg></div>",
                h + 11, BUDGET_DAYS - 1, width, h + 11);
        shown++;
        i = end;
    }
    if (!shown)
        fprintf(f, "<p class=\"empty\">Nothing spent in the last %d days.</p>", BUDGET_DAYS);
}

static void perf_table(FILE *f, const decisions_page *p)
{
    int n = p->nperf;
    if (!n) {
        fputs("<p class=\"empty\">retrig-perf took no alert in this window.</p>", f);
        return;
    }
    fputs("<table class=\"perf\" id=\"backfills\"><thead><tr><th>taken</th><th>alert "
          "summary</th><th>alert</th><th>platform</th><th>family</th><th class=\"n\">change</th>"
          "<th>outcome</th><th class=\"n\">jobs</th><th>follow-up</th></tr></thead><tbody>",
          f);
    for (int i = 0; i < n; i++) {
        fputs("<tr><td>", f);
        rt__html_when(f, p->perf[i].intent_at);
        fputs("</td><td>", f);
        if (p->perfherder) {
            fputs("<a target=\"_blank\" rel=\"noopener\" href=\"", f);
            rt__html_base_url(f, p->perfherder);
            fputs("/perfherder/alerts?id=", f);
            rt__html_query_value(f, p->perf[i].summary_id);
            fputs("\">", f);
        }
        rt__html(f, p->perf[i].summary_id);
        if (p->perfherder) fputs("</a>", f);
        fputs(" <span class=\"small\">", f);
        rt__html(f, p->perf[i].repository);
        fputs("</span></td><td>", f);
        rt__html(f, p->perf[i].alert_id);
        fputs("</td><td class=\"mono small\">", f);
        rt__html(f, p->perf[i].platform);
        fputs("</td><td>", f);
        rt__html(f, p->perf[i].family);
        bool regression = p->perf[i].is_regression;
        fprintf(f, "</td><td class=\"n\">%s%.1f%% <small>%s</small></td><td class=\"outcome\">",
                regression ? "+" : "−", p->perf[i].amount_pct,
                regression ? "regression" : "improvement");
        rt__html(f, p->perf[i].outcome);
        if (p->perf[i].dry_run && strcmp(p->perf[i].outcome, "dry-run") != 0)
            fputs(" (dry run)", f);
        if (p->perf[i].error[0]) {
            fputs("<br><small>", f);
            rt__html_cut(f, p->perf[i].error, 200);
            fputs("</small>", f);
        }
        fprintf(f, "</td><td class=\"n\">%s</td><td>", p->perf[i].jobs_scheduled);
        rt__html(f, p->perf[i].followup_state[0] ? p->perf[i].followup_state : "–");
        if (p->perf[i].followup_reason[0]) {
            fputs(": ", f);
            rt__html(f, p->perf[i].followup_reason);
        }
        fputs("</td></tr>", f);
    }
    fputs("</tbody></table>", f);
}

static int write_page(FILE *f, const void *ctx)
{
    const decisions_page *p = ctx;
    const char *link = p->link, *since_text = p->since_text;
    char subtitle[256];
    snprintf(subtitle, sizeof subtitle,
             "Verdicts of retrig-decide and infrastructure failures found by retrig-classify, "
             "%.10s %.5s – %.10s %.5s UTC (%s), newest first; budgets and backfills.",
             p->since, p->since + 11, p->until, p->until + 11, since_text);
    rt__html_page_start(f, "Decisions", "decisions", link, subtitle);
    verdict_cards(f, p);
    size_t total = p->ndecisions + p->ninfra;
    fputs("<h2>Verdicts</h2>\n<div class=\"filters js-only\" hidden>"
          "<label for=\"f-verdict\">verdict</label><select id=\"f-verdict\"><option "
          "value=\"\">all</option><option>regression</option><option>intermittent</option>"
          "<option>infra</option><option>undecided</option></select>"
          "<label for=\"f-project\">project</label><select id=\"f-project\"><option "
          "value=\"\">all</option>",
          f);
    options_of(f, p, false);
    fputs("</select><label for=\"f-platform\">platform</label><select id=\"f-platform\"><option "
          "value=\"\">all</option>",
          f);
    options_of(f, p, true);
    fputs("</select><span class=\"count\" id=\"shown\"></span><button type=\"button\" "
          "class=\"expand-all\" id=\"expand-all\">expand all</button></div>\n",
          f);
    fputs("<div class=\"decisions\" id=\"decisions\"><div class=\"head\"><span>decided "
          "(UTC)</span><span>verdict</span><span>project</span><span>platform</span><span>label</"
          "span><span>reason</span><span>reproduced</span><span>Treeherder</span></div>\n",
          f);
    /* newest first across both lists */
    size_t d = 0, r = 0;
    while (d < p->ndecisions || r < p->ninfra) {
        bool take_decision =
            r >= p->ninfra || (d < p->ndecisions &&
                               strcmp(p->decisions[d].decided_at, p->infra[r].classified_at) >= 0);
        if (take_decision)
            decision_item(f, p, d++);
        else
            infra_item(f, p, r++);
    }
    if (!total)
        fputs("<p class=\"empty\" style=\"padding:.8em\">No verdict in this window.</p>", f);
    fputs("</div>\n<h2>Budgets</h2><p class=\"small\">What was spent today against each "
          "daily limit, and the last 14 days (dashed: the limit). Retriggers come from "
          "budget_limits, backfill jobs from perf_budget_limits.</p>"
          "<h3>Retriggers per platform (retrig-classify)</h3><div "
          "class=\"budgets\" id=\"budget-retriggers\">",
          f);
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_perf_options po;
    bool have_perf = rt_perf_options_from_config(&po, p->cfg, errstr) == RT_OK;
    budget_cards(f, p, false, NULL);
    fputs("</div>\n<h3>Backfill jobs per platform family (retrig-perf)</h3><div "
          "class=\"budgets\" id=\"budget-backfills\">",
          f);
    if (have_perf) budget_cards(f, p, true, &po);
    fputs("</div>\n<h2>Performance alerts backfilled (retrig-perf)</h2>\n", f);
    perf_table(f, p);
    rt__html_page_end(f, rt__decisions_js);
    return ferror(f) ? -1 : 0;
}

int rt__cli_report_decisions(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"decisions", no_argument, NULL, 'd'},   {"out", required_argument, NULL, 'o'},
        {"since", required_argument, NULL, 's'}, {"until", required_argument, NULL, 'u'},
        {"link", required_argument, NULL, 'k'},  {"treeherder", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    decisions_page p = {.cfg = cfg, .treeherder = cfg->treeherder_url};
    const char *out_path = NULL, *link = NULL, *until = "now", *since_arg = "14d";
    char since[64] = "14 days";
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'd': break;
        case 'o': out_path = optarg; break;
        case 's':
            if (rt__cli_parse_duration(optarg, since, sizeof since) != 0) {
                rt_log_error("--since wants a number and h, d or w", "value", optarg);
                return 2;
            }
            since_arg = optarg;
            break;
        case 'u': until = optarg; break;
        case 'k': link = optarg; break;
        case 't': p.treeherder = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!out_path || optind < argc) {
        usage(stderr);
        return 2;
    }
    if (p.treeherder && !rt__html_safe_base_url(p.treeherder)) {
        rt_log_error("--treeherder (or treeherder_url) is not a plain http(s) URL; no links",
                     "value", p.treeherder);
        p.treeherder = NULL;
    }
    p.perfherder = p.treeherder;
    int status = 1;
    rt_pg *pg = NULL;
    char *ids_text = NULL;
    if (rt__cli_connect(cfg, "cli", &pg) != 0) goto out;
    rt_page_window window;
    if (rt_page_window_read(pg, until, since, &window) != RT_OK) {
        rt__cli_db_error(pg, "cannot read the window (is --until ISO-8601?)");
        goto out;
    }
    memcpy(p.until, window.until, sizeof p.until);
    memcpy(p.since, window.since, sizeof p.since);
    memcpy(p.today, window.today, sizeof p.today);
    const char *what = "cannot read the decisions";
    if (rt_page_decisions(pg, p.until, since, MAX_ROWS, &p.decisions, &p.ndecisions) != RT_OK ||
        (what = "cannot read the runs",
         rt_page_infra_read(pg, p.until, since, MAX_ROWS, &p.infra, &p.ninfra) != RT_OK) ||
        (what = "cannot read retrig-perf's alerts",
         rt_perf_store_recent(pg, p.until, since, MAX_ROWS, &p.perf, &p.nperf) != RT_OK)) {
        rt__cli_db_error(pg, what);
        goto out;
    }
    json_t *ids = json_array();
    for (size_t i = 0; ids && i < p.ndecisions; i++)
        json_array_append_new(ids, json_string(p.decisions[i].set_id));
    ids_text = ids ? json_dumps(ids, JSON_COMPACT) : NULL;
    json_decref(ids);
    if (!ids_text) goto out;
    what = "cannot read the retrigger sets";
    if (rt_page_members(pg, ids_text, &p.members, &p.nmembers) != RT_OK ||
        (what = "cannot read the retrigger actions",
         rt_page_actions(pg, ids_text, &p.actions, &p.nactions) != RT_OK) ||
        (what = "cannot read the budget ledger",
         rt_ledger_days(pg, p.until, BUDGET_DAYS, &p.budget, &p.nbudget) != RT_OK)) {
        rt__cli_db_error(pg, what);
        goto out;
    }
    p.link = link;
    p.since_text = since_arg;
    if (rt__cli_write_file(out_path, "the page", write_page, &p) != 0) goto out;
    printf("%s: %zu decisions, %zu infra failures, %zu backfills\n", out_path, p.ndecisions,
           p.ninfra, p.nperf);
    status = 0;
out:
    free(ids_text);
    rt_page_decision_free(p.decisions, p.ndecisions);
    rt_page_infra_free(p.infra, p.ninfra);
    rt_page_member_free(p.members, p.nmembers);
    rt_page_action_free(p.actions, p.nactions);
    rt_ledger_day_free(p.budget, p.nbudget);
    rt_perf_recent_free(p.perf, p.nperf);
    rt_pg_free(pg);
    return status;
}
