/* SPDX-License-Identifier: MPL-2.0 */
/* coverage.c - what the test history of a repository rests on in a window: runs, pushes,
 * branches and pull requests recorded, per day and per project, where they came from,
 * and the collection gaps (stretches with no run at all, projects gone quiet), as the one
 * JSON object the flaky-test page embeds and draws (see rt__cli_coverage in cli.h).
 * Read-only. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/io/pg.h"
#include "common/store/history.h"

/* Whether a read failed (then logged). */
static bool db_failed(rt_pg *pg, int rc)
{
    if (rc == RT_OK) return false;
    rt__cli_db_error(pg, "cannot read the coverage of the test history");
    return true;
}

/* Long because it is the page's four coverage reads (window, days, projects and sources, gaps)
 * in turn, each turned into its part of one JSON object. */
json_t *rt__cli_coverage(rt_pg *pg, const rt_config *cfg, const char *repository, const char *start,
                         const char *until, long long window_seconds)
{
    bool ok = false;
    rt_history_coverage_totals *totals = NULL;
    rt_history_coverage_day *day_rows = NULL;
    rt_history_coverage_project *project_rows = NULL;
    rt_history_coverage_gap *gap_rows = NULL;
    size_t ntotals = 0, ndays = 0, nprojects = 0, ngaps = 0;
    json_t *doc = NULL, *gaps = json_array(), *notes = json_array(), *days = json_array(),
           *projects = json_array(), *sources = json_object();
    if (!gaps || !notes || !days || !projects || !sources) goto out;
    if (db_failed(pg,
                  rt_history_coverage_totals_read(pg, repository, start, until, &totals, &ntotals)))
        goto out;
    rt_history_coverage_totals none = {0};
    const rt_history_coverage_totals *t = ntotals == 1 ? &totals[0] : &none;
    long long runs = t->runs, failures_only = t->failures_only_runs;
    doc =
        json_pack("{s:s, s:{s:s, s:s}, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s}", "repository",
                  repository, "window", "start", start, "until", until, "runs", (json_int_t)runs,
                  "main_runs", (json_int_t)t->main_runs, "pushes", (json_int_t)t->pushes,
                  "main_pushes", (json_int_t)t->main_pushes, "other_branches",
                  (json_int_t)t->other_branches, "prs", (json_int_t)t->prs, "failures_only_runs",
                  (json_int_t)failures_only, "first_run", t->first_run, "last_run", t->last_run);
    if (!doc) goto out;

    if (db_failed(pg, rt_history_coverage_days(pg, repository, start, until, &day_rows, &ndays)))
        goto out;
    for (size_t i = 0; i < ndays; i++)
        json_array_append_new(days, json_pack("{s:s, s:I, s:I}", "day", day_rows[i].day, "runs",
                                              (json_int_t)day_rows[i].runs, "main_runs",
                                              (json_int_t)day_rows[i].main_runs));

    if (db_failed(pg, rt_history_coverage_projects(pg, repository, start, until, &project_rows,
                                                   &nprojects)))
        goto out;
    for (size_t i = 0; i < nprojects; i++) {
        const rt_history_coverage_project *p = &project_rows[i];
        json_array_append_new(projects,
                              json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:I, s:I}", "project",
                                        p->project, "branch_class", p->branch_class, "source",
                                        p->source, "runs", (json_int_t)p->runs, "pushes",
                                        (json_int_t)p->pushes, "last_run", p->last_run, "branches",
                                        (json_int_t)p->branches, "prs", (json_int_t)p->prs));
        json_t *count = json_object_get(sources, p->source);
        json_object_set_new(sources, p->source, json_integer(json_integer_value(count) + p->runs));
    }

    /* A gap is a stretch without any run, at least 6 hours and ten times the usual wait
     * between two runs (a small repository is quiet at night). */
    long long usual = runs > 0 ? window_seconds / runs : window_seconds;
    long long threshold = usual * 10 > 6 * 3600 ? usual * 10 : 6 * 3600;
    if (db_failed(pg, rt_history_coverage_gaps(pg, repository, start, until, threshold, &gap_rows,
                                               &ngaps)))
        goto out;
    for (size_t i = 0; i < ngaps; i++) {
        const rt_history_coverage_gap *g = &gap_rows[i];
        const char *what = g->at_start && g->at_end ? "no run recorded in the window"
                           : g->at_start            ? "no run recorded before"
                           : g->at_end              ? "no run recorded since"
                                                    : "no run recorded";
        json_array_append_new(gaps, json_pack("{s:s, s:s, s:s, s:f, s:s}", "kind", "no-runs",
                                              "from", g->gap_from, "to", g->gap_to, "hours",
                                              (double)g->seconds / 3600.0, "what", what));
    }

    if (failures_only > 0) {
        char note[320];
        snprintf(note, sizeof note,
                 "%lld of %lld runs record failures only (Taskcluster errorsummary): a test's "
                 "passing runs are the runs of its group, and a test that never failed in a "
                 "group is not in the history.",
                 failures_only, runs);
        json_array_append_new(notes, json_string(note));
    }
    if (cfg->history_sample_percent < 100) {
        char note[160];
        snprintf(note, sizeof note,
                 "history_sample_percent is %d: only that share of task runs is recorded.",
                 cfg->history_sample_percent);
        json_array_append_new(notes, json_string(note));
    }
    char main_note[512] = "Main branches (history_main_projects): ";
    for (size_t i = 0; i < cfg->history_main_projects.count; i++) {
        size_t len = strlen(main_note);
        snprintf(main_note + len, sizeof main_note - len, "%s%s", i ? ", " : "",
                 cfg->history_main_projects.items[i]);
    }
    json_array_append_new(notes, json_string(main_note));
    json_object_set_new(doc, "days", days);
    json_object_set_new(doc, "projects", projects);
    json_object_set_new(doc, "sources", sources);
    json_object_set_new(doc, "gaps", gaps);
    json_object_set_new(doc, "notes", notes);
    json_object_set_new(doc, "gap_threshold_hours", json_real((double)threshold / 3600.0));
    ok = true;
out:
    if (!ok) {
        json_decref(doc);
        json_decref(gaps);
        json_decref(notes);
        json_decref(days);
        json_decref(projects);
        json_decref(sources);
        doc = NULL;
    }
    rt_history_coverage_totals_free(totals, ntotals);
    rt_history_coverage_day_free(day_rows, ndays);
    rt_history_coverage_project_free(project_rows, nprojects);
    rt_history_coverage_gap_free(gap_rows, ngaps);
    return doc;
}
