/* SPDX-License-Identifier: MPL-2.0 */
/* report.c - `retrig report`: the flaky-test page of a project as one self-contained HTML
 * file (no network, no server; `--decisions` writes the sheriffs' page instead, see
 * report_decisions.c). On top, how many tests are flaky now, new this week and fixed this
 * week, and what the data rests on (runs, pushes and pull requests covered, collection
 * gaps; the JSON object of coverage.c, embedded as it is). Then every failing test (flaky
 * ones first, up to --limit): failure rate, breadth, the chance a push sees it, its first
 * failure, and a chart of its runs over the window, drawn here as SVG: each run a dot
 * stacked in its time slot (failures first, red on main branches, orange elsewhere), on a
 * lane for main branches and one for the others, and the daily failure rate as a line.
 * Both scopes, "all branches" and "main only", are in every row and chart; CSS shows one
 * (the toggle works without JavaScript), and cli/pages/flaky.js adds sorting, search,
 * paging and the URL. Read-only on the database. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/core/matrix_variant.h"
#include "common/core/utf8.h"
#include "cli/html.h"
#include "common/io/pg.h"
#include "common/store/history.h"
#include "common/store/outcomes.h"

#define CHART_TARGET_WIDTH 372 /* px for the whole window */
#define DOTS_MAX           5   /* dots per slot and lane */
#define DOT_PITCH          3   /* px: a 2 px dot and a 1 px gap */
#define RATE_TOP           3
#define RATE_BASE          30
#define LANE_MAIN          48 /* baselines: dots grow upwards from them */
#define LANE_OTHER         66
#define CHART_HEIGHT       68
#define DEFAULT_LIMIT      2000
#define MAX_LIMIT          5000

/* Above it the charts read day slots from the per-day rollup (common/store/history.h). */
#define DAY_SLOTS_RUNS 5000

typedef struct row {
    const char *test;
    json_t *all, *main; /* the rows of history_flakes in each scope, NULL: not listed */
    int rank_all, rank_main;
    int *runs, *fails; /* [lane * nslots + slot]; lane 0 main branches, 1 the others */
    bool flaky, flaky_now, is_new, is_fixed, regression_like;
    int first_fail, last_fail; /* slots, -1: none in the window */
    int index;                 /* id="t-<index>" */
} row;

typedef struct page {
    rt__flakes_query q;
    const char *treeherder;
    const char *link;       /* --link: where the page links back to, or NULL */
    long long start, until; /* Unix seconds */
    char start_text[32], until_text[32];
    int days, slots_per_day, nslots, slot_seconds, day_px, pitch, dot, width;
    int week_slot;  /* the first slot of the last 7 days */
    bool by_day;    /* day slots from the rollup: whole days, more than DAY_SLOTS_RUNS runs */
    bool compact;   /* many tests: the rare ones in short form */
    int label_days; /* between two dates on the axis (and lines in the charts) */
    row *rows;
    size_t nrows;
    const row **order; /* the rows in page order */
    json_t *all, *main, *now, *coverage;
    rt_outcome_labels_list labels; /* FLAKY, DISABLED, ... per test (common/store/outcomes.h) */
    rt_test_variants variants;     /* runs and failures per variant (matrix job, platform/build) */
} page;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig report --project P --out FILE [--window 30d] [--until ISO-8601]\n"
            "                     [--min-branches N] [--limit N] [--link HREF] [--treeherder URL]\n"
            "       retrig report --decisions --out FILE [--since 14d] [--link HREF] ...\n"
            "Writes the flaky-test page of P (see retrig flakes) as one self-contained HTML\n"
            "file: flaky tests now, new and fixed this week, what the data rests on, and every\n"
            "failing test (at most N, default 2000) with a chart of its runs, for all branches\n"
            "and for main branches only. --link adds a link to the sheriffs' page (a path or\n"
            "URL, relative to FILE); --treeherder (default treeherder_url) is where the links\n"
            "to pushes point. It reads on two database connections at once (one when a\n"
            "second cannot be opened). retrig report --decisions --help tells about the\n"
            "other page.\n"
            "Exit: 0 written, 1 database or file error, 2 usage.\n");
}

static long long integer(json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

static double real(json_t *o, const char *key) { return json_real_value(json_object_get(o, key)); }

/* The page's geometry from the window and the number of tests: a day is day_px wide, cut in
 * slots_per_day slots of pitch px; fewer slots with many tests keep the file small. */
static void geometry(page *p)
{
    p->days = (int)((p->until - p->start + 86399) / 86400);
    if (p->days < 1) p->days = 1;
    int day_px = CHART_TARGET_WIDTH / p->days;
    if (day_px < DOT_PITCH) day_px = DOT_PITCH;
    /* slots in the whole window: fewer with many tests, so that the file stays small */
    int most_slots = p->nrows <= 400 ? 124 : p->nrows <= 1000 ? 62 : 31;
    static const int choices[] = {24, 12, 8, 6, 4, 3, 2, 1};
    int spd = 1;
    for (size_t i = 0; !p->by_day && i < sizeof choices / sizeof choices[0]; i++)
        if (day_px / choices[i] >= DOT_PITCH && p->days * choices[i] <= most_slots) {
            spd = choices[i];
            break;
        }
    p->slots_per_day = spd;
    p->pitch = day_px / spd;
    p->day_px = p->pitch * spd;
    p->nslots = p->days * spd;
    p->slot_seconds = 86400 / spd;
    p->width = p->days * p->day_px;
    p->dot = p->pitch - 1 > 6 ? 6 : p->pitch - 1;
    p->compact = p->nrows > 1000;
    long long week = p->until - 7 * 86400LL - p->start;
    p->week_slot = week < 0 ? 0 : (int)(week / p->slot_seconds);
    /* dates on the axis every week from the start, or every day in a short window, at
     * least 60 px apart */
    p->label_days = p->days <= 10 ? 1 : 7;
    while (p->label_days * p->day_px < 60) p->label_days += p->label_days == 1 ? 1 : 7;
}

static int by_test(const void *a, const void *b)
{
    return strcmp(((const row *)a)->test, ((const row *)b)->test);
}

static row *find_row(page *p, const char *test)
{
    row key = {.test = test};
    return bsearch(&key, p->rows, p->nrows, sizeof *p->rows, by_test);
}

/* One row per test listed in either scope, all branches' order first. */
static int merge_rows(page *p)
{
    size_t cap = json_array_size(p->all) + json_array_size(p->main);
    p->rows = calloc(cap + 1, sizeof *p->rows);
    if (!p->rows) return -1;
    size_t i;
    json_t *r;
    json_array_foreach(p->all, i, r)
    {
        row *w = &p->rows[p->nrows];
        w->test = json_string_value(json_object_get(r, "test"));
        w->all = r;
        w->rank_all = (int)i;
        w->rank_main = -1;
        w->index = (int)p->nrows++;
    }
    qsort(p->rows, p->nrows, sizeof *p->rows, by_test);
    size_t listed = p->nrows;
    /* When --limit cut the list of all branches, a test listed on main only is left out too:
     * the page holds at most --limit tests. */
    bool cut = json_array_size(p->all) >= (size_t)p->q.limit;
    json_array_foreach(p->main, i, r)
    {
        const char *test = json_string_value(json_object_get(r, "test"));
        row key = {.test = test}, *w = bsearch(&key, p->rows, listed, sizeof *p->rows, by_test);
        if (!w && cut) continue;
        if (!w) {
            w = &p->rows[p->nrows];
            w->test = test;
            w->rank_all = -1;
            w->index = (int)p->nrows++;
        }
        w->main = r;
        w->rank_main = (int)i;
    }
    qsort(p->rows, p->nrows, sizeof *p->rows, by_test);
    return 0;
}

/* The window as the database sees it: p->start, p->until and their texts. */
static int load_window(page *p, rt_pg *pg)
{
    char until[32];
    rt_history_window w;
    if (rt_history_window_read(pg, rt__cli_history_until(p->q.until, until), p->q.window, &w) !=
        RT_OK) {
        rt__cli_db_error(pg, "cannot read the window (is --until an ISO-8601 time?)");
        return -1;
    }
    p->start = w.start;
    p->until = w.until;
    snprintf(p->start_text, sizeof p->start_text, "%s", w.start_text);
    snprintf(p->until_text, sizeof p->until_text, "%s", w.until_text);
    return 0;
}

/* Whether the charts use day slots from the rollup: a window of whole UTC days with more
 * runs than DAY_SLOTS_RUNS (then the raw rows cost seconds: 34 s for 1,000 tests over 30
 * days at a million outcomes); finer slots from the raw rows otherwise. */
static int choose_slots(page *p, rt_pg *pg)
{
    p->by_day = false;
    if (p->start % 86400 != 0 || p->until % 86400 != 0) return 0;
    long long runs = 0;
    if (rt_history_window_runs(pg, p->q.project, p->start_text, p->until_text, DAY_SLOTS_RUNS + 1,
                               &runs) != RT_OK) {
        rt__cli_db_error(pg, "cannot count the runs of the window");
        return -1;
    }
    p->by_day = runs > DAY_SLOTS_RUNS;
    return 0;
}

static int load_marks(page *p, rt_pg *pg)
{
    json_t *tests = json_array();
    for (size_t i = 0; tests && i < p->nrows; i++) {
        p->rows[i].runs = calloc((size_t)p->nslots * 2, sizeof(int));
        p->rows[i].fails = calloc((size_t)p->nslots * 2, sizeof(int));
        if (!p->rows[i].runs || !p->rows[i].fails) {
            json_decref(tests);
            return -1;
        }
        json_array_append_new(tests, json_string(p->rows[i].test));
    }
    char *tests_text = tests ? json_dumps(tests, JSON_COMPACT) : NULL;
    json_decref(tests);
    if (!tests_text) return -1;
    rt_history_mark *marks = NULL;
    size_t n = 0;
    int rc = rt_history_marks(pg, p->q.project, tests_text, p->start_text, p->until_text,
                              p->slot_seconds, p->by_day, &marks, &n);
    free(tests_text);
    if (rc != RT_OK) {
        rt__cli_db_error(pg, "cannot read the runs of the listed tests");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        row *w = find_row(p, marks[i].test);
        int s = (int)marks[i].slot;
        if (!w || s < 0 || s >= p->nslots) continue;
        int lane = marks[i].main ? 0 : 1;
        w->runs[lane * p->nslots + s] += (int)marks[i].runs;
        w->fails[lane * p->nslots + s] += (int)marks[i].failures;
    }
    rt_history_mark_free(marks, n);
    return 0;
}

/* Flaky now, new this week, fixed this week, failing like a regression (see the legend). */
static void classify(page *p)
{
    size_t i;
    json_t *r;
    json_array_foreach(p->now, i, r)
    {
        row *w = find_row(p, json_string_value(json_object_get(r, "test")));
        if (w && json_is_true(json_object_get(r, "flaky"))) w->flaky_now = true;
    }
    for (size_t k = 0; k < p->nrows; k++) {
        row *w = &p->rows[k];
        w->flaky = json_is_true(json_object_get(w->all ? w->all : w->main, "flaky"));
        w->first_fail = w->last_fail = -1;
        long long runs_since_week = 0;
        for (int s = 0; s < p->nslots; s++) {
            int fails = w->fails[s] + w->fails[p->nslots + s];
            if (fails && w->first_fail < 0) w->first_fail = s;
            if (fails) w->last_fail = s;
            if (s >= p->week_slot) runs_since_week += w->runs[s] + w->runs[p->nslots + s];
        }
        w->is_new = false; /* below, once regression_like is known */
        w->is_fixed = w->flaky && !w->flaky_now && w->last_fail >= 0 &&
                      w->last_fail < p->week_slot &&
                      w->last_fail >= p->week_slot - 7 * p->slots_per_day && runs_since_week >= 5;
        long long runs = 0, fails = 0, main_runs = 0, main_fails = 0;
        /* from its first failure in the window; none there (history_flakes may count one the
         * charts' slots do not hold, at the window's edge): nothing to count */
        for (int s = w->first_fail; s >= 0 && s < p->nslots; s++) {
            runs += w->runs[s] + w->runs[p->nslots + s];
            fails += w->fails[s] + w->fails[p->nslots + s];
            main_runs += w->runs[s];
            main_fails += w->fails[s];
        }
        /* not when it fails since the window began: then when it started is unknown */
        w->regression_like = w->first_fail >= p->slots_per_day && fails >= 10 &&
                             fails * 10 >= runs * 6 && main_fails >= 5 &&
                             main_fails * 10 >= main_runs * 6;
        w->is_new = w->flaky_now && w->first_fail >= p->week_slot && !w->regression_like;
    }
}

static void day_label(long long at, char *out, size_t size)
{
    time_t t = (time_t)at;
    struct tm tm;
    strftime(out, size, "%d %b", gmtime_r(&t, &tm));
}

/* The shared background of every chart (one copy, <use>d by each): the last 7 days, the
 * collection gaps, a line under each date of the axis. */
static void chart_defs(FILE *f, const page *p)
{
    fputs("<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>"
          "<pattern id=\"hatch\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"5\" fill=\"#cf222e\" "
          "opacity=\".3\"/></pattern><g id=\"chart-bg\">",
          f);
    int week_x = p->week_slot * p->pitch;
    fprintf(f, "<rect class=\"bg-week\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\"/>", week_x,
            p->width - week_x, CHART_HEIGHT);
    size_t i;
    json_t *gap;
    json_array_foreach(json_object_get(p->coverage, "gaps"), i, gap)
    {
        time_t from, to;
        struct tm tm = {0};
        const char *a = json_string_value(json_object_get(gap, "from"));
        const char *b = json_string_value(json_object_get(gap, "to"));
        if (!a || !b || !strptime(a, "%Y-%m-%dT%H:%M:%SZ", &tm)) continue;
        from = timegm(&tm);
        memset(&tm, 0, sizeof tm);
        if (!strptime(b, "%Y-%m-%dT%H:%M:%SZ", &tm)) continue;
        to = timegm(&tm);
        double x0 = (double)(from - p->start) * p->day_px / 86400.0;
        double x1 = (double)(to - p->start) * p->day_px / 86400.0;
        fprintf(f, "<rect class=\"bg-gap\" x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\"/>", x0,
                x1 - x0, CHART_HEIGHT);
    }
    for (long long at = p->start + p->label_days * 86400LL; at < p->until;
         at += p->label_days * 86400LL) {
        double x = (double)(at - p->start) * p->day_px / 86400.0;
        fprintf(f, "<line class=\"bg-tick\" x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%d\"/>", x, x,
                CHART_HEIGHT);
    }
    fprintf(f, "<line class=\"bg-line\" x1=\"0\" y1=\"%d.5\" x2=\"%d\" y2=\"%d.5\"/>", RATE_BASE,
            p->width, RATE_BASE);
    fprintf(f, "<rect class=\"bg-band\" x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\"/>",
            LANE_MAIN - DOTS_MAX * 3, p->width, DOTS_MAX * 3);
    fputs("</g></defs></svg>\n", f);
}

/* The dates above the charts: the start, each week back from the end, the end. */
static void chart_axis(FILE *f, const page *p)
{
    fprintf(f, "<svg class=\"axis\" width=\"%d\" height=\"14\">", p->width);
    char label[16];
    day_label(p->start, label, sizeof label);
    fprintf(f, "<text x=\"0\" y=\"11\">%s</text>", label);
    for (long long at = p->start + p->label_days * 86400LL; at < p->until;
         at += p->label_days * 86400LL) {
        double x = (double)(at - p->start) * p->day_px / 86400.0;
        if (x < 60 || x > p->width - 45) continue; /* the start's and the end's labels */
        day_label(at, label, sizeof label);
        fprintf(f, "<text x=\"%.0f\" y=\"11\" text-anchor=\"middle\">%s</text>", x, label);
    }
    fprintf(f, "<text x=\"%d\" y=\"11\" text-anchor=\"end\">now</text></svg>", p->width);
}

/* The daily failure rate of a scope (lanes 0..last_lane): one path, a subpath per stretch of
 * days with runs, each from the baseline and back to it, so that its fill is the area under
 * the line. Relative steps, flat stretches merged: most days of most tests are at 0. */
static void rate_path(FILE *f, const page *p, const row *w, int last_lane, double ymax,
                      const char *scope)
{
    bool open = false, any = false;
    int prev_x = 0, prev_y = 0, flat = 0;
    for (int d = 0; d <= p->days; d++) {
        long long runs = 0, fails = 0;
        for (int s = d * p->slots_per_day; d < p->days && s < (d + 1) * p->slots_per_day; s++)
            for (int lane = 0; lane <= last_lane; lane++) {
                runs += w->runs[lane * p->nslots + s];
                fails += w->fails[lane * p->nslots + s];
            }
        int x = d * p->day_px + p->day_px / 2;
        if (!runs) {
            if (open) {
                if (flat) fprintf(f, "h%d", flat);
                fprintf(f, "V%d", RATE_BASE);
            }
            open = false;
            flat = 0;
            continue;
        }
        double rate = (double)fails / (double)runs / ymax;
        int y = RATE_BASE - (int)lround((rate > 1 ? 1 : rate) * (RATE_BASE - RATE_TOP));
        if (!any) fprintf(f, "<path class=\"rate v-%s\" d=\"", scope);
        any = true;
        if (!open) {
            fprintf(f, "M%d %dV%d", x, RATE_BASE, y);
            open = true;
        } else if (y == prev_y) {
            flat += x - prev_x;
        } else {
            if (flat) fprintf(f, "h%d", flat);
            flat = 0;
            fprintf(f, "l%d %d", x - prev_x, y - prev_y);
        }
        prev_x = x;
        prev_y = y;
    }
    if (any) fputs("\"/>", f);
}

/* One lane's dots: per slot, failures from the baseline up, then passes, at most DOTS_MAX,
 * each dot `scale` runs. Drawn a row of dots at a time: a run of neighbouring slots with a
 * dot in that row is one dashed horizontal segment (the dash is the dot, the gap the space
 * between slots), so a busy lane costs a few segments per row. */
static void lane_paths(FILE *f, const page *p, const row *w, int lane, int scale, int dot)
{
    int base = lane == 0 ? LANE_MAIN : LANE_OTHER;
    int *fd = calloc((size_t)p->nslots + 1, sizeof *fd),
        *pd = calloc((size_t)p->nslots + 1, sizeof *pd);
    if (lane == 0)
        fputs("<g class=\"lane-main\">", f); /* its band is in #chart-bg */
    else
        fprintf(f, "<g class=\"lane-other v-all\"><path class=\"band\" d=\"M0 %dh%dv%dH0z\"/>",
                base - DOTS_MAX * 3, p->width, DOTS_MAX * 3);
    for (int s = 0; fd && pd && s < p->nslots; s++) {
        int runs = w->runs[lane * p->nslots + s], fails = w->fails[lane * p->nslots + s];
        fd[s] = fails ? (fails + scale - 1) / scale : 0;
        if (fd[s] > DOTS_MAX) fd[s] = DOTS_MAX;
        pd[s] = runs > fails ? (runs - fails + scale - 1) / scale : 0;
        if (pd[s] > DOTS_MAX - fd[s]) pd[s] = DOTS_MAX - fd[s];
    }
    for (int kind = 0; fd && pd && kind < 2; kind++) {
        bool any = false;
        int pen_x = 0, pen_y = 0; /* where the last segment ended: moves are relative */
        for (int r = 0; r < DOTS_MAX; r++) {
            for (int s = 0; s < p->nslots;) {
                bool has = kind == 0 ? r < fd[s] : r >= fd[s] && r < fd[s] + pd[s];
                if (!has) {
                    s++;
                    continue;
                }
                int first = s;
                while (s < p->nslots && (kind == 0 ? r < fd[s] : r >= fd[s] && r < fd[s] + pd[s]))
                    s++;
                int x = first * p->pitch, y = base - 3 * r - 1,
                    len = (s - first - 1) * p->pitch + dot;
                if (!any)
                    fprintf(f, "<path class=\"%s\" d=\"M%d %dh%d", kind == 0 ? "f" : "p", x, y,
                            len);
                else
                    fprintf(f, "m%d %dh%d", x - pen_x, y - pen_y, len);
                any = true;
                pen_x = x + len;
                pen_y = y;
            }
        }
        if (any) fputs("\"/>", f);
    }
    free(fd);
    free(pd);
    fputs("</g>", f);
}

static void chart(FILE *f, const page *p, const row *w)
{
    long long runs[2] = {0, 0}, fails[2] = {0, 0};
    int most = 0;
    double ymax = 0;
    for (int lane = 0; lane < 2; lane++)
        for (int s = 0; s < p->nslots; s++) {
            int r = w->runs[lane * p->nslots + s];
            runs[lane] += r;
            fails[lane] += w->fails[lane * p->nslots + s];
            if (r > most) most = r;
        }
    long long most_runs_a_day = 0;
    for (int d = 0; d < p->days; d++) {
        long long day = 0;
        for (int s = d * p->slots_per_day; s < (d + 1) * p->slots_per_day; s++)
            day += w->runs[s] + w->runs[p->nslots + s];
        if (day > most_runs_a_day) most_runs_a_day = day;
    }
    for (int d = 0; d < p->days; d++) {
        long long r[2] = {0, 0}, k[2] = {0, 0};
        for (int s = d * p->slots_per_day; s < (d + 1) * p->slots_per_day; s++)
            for (int lane = 0; lane < 2; lane++) {
                r[lane] += w->runs[lane * p->nslots + s];
                k[lane] += w->fails[lane * p->nslots + s];
            }
        /* the scale follows the days with a few runs at least: a day of two runs, one of
         * them failed, would squash every other day (it is drawn at the top) */
        int least = most_runs_a_day >= 5 ? 5 : 1;
        if (r[0] >= least && (double)k[0] / (double)r[0] > ymax) ymax = (double)k[0] / (double)r[0];
        if (r[0] + r[1] >= least && (double)(k[0] + k[1]) / (double)(r[0] + r[1]) > ymax)
            ymax = (double)(k[0] + k[1]) / (double)(r[0] + r[1]);
    }
    static const double scales[] = {0.05, 0.1, 0.25, 0.5, 0.75, 1.0};
    double top = 1.0;
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
        if (ymax <= scales[i]) {
            top = scales[i];
            break;
        }
    int scale = most > DOTS_MAX ? (most + DOTS_MAX - 1) / DOTS_MAX : 1;
    fprintf(f, "<svg class=\"runs\" width=\"%d\" height=\"%d\" role=\"img\">", p->width,
            CHART_HEIGHT);
    fprintf(f,
            "<title>main: %lld runs, %lld failed; elsewhere: %lld runs, %lld failed; a dot: %d "
            "run%s</title><use href=\"#chart-bg\"/><text x=\"1\" y=\"9\">%.0f%%</text>",
            runs[0], fails[0], runs[1], fails[1], scale, scale == 1 ? "" : "s", top * 100);
    rate_path(f, p, w, 1, top, "all");
    rate_path(f, p, w, 0, top, "main");
    fputs("<g class=\"marks\">", f);
    lane_paths(f, p, w, 0, scale, p->dot);
    lane_paths(f, p, w, 1, scale, p->dot);
    fputs("</g></svg>", f);
}

/* A figure of both scopes: <span class="v-all">...</span><span class="v-main">...</span>. */
static void figure(FILE *f, json_t *row_json, const char *scope, const char *what)
{
    fprintf(f, "<span class=\"v-%s\">", scope);
    if (!row_json) {
        fputs("<b>–</b><small>not listed</small></span>", f);
        return;
    }
    if (!strcmp(what, "rate")) {
        fprintf(f, "<b>%.1f%%</b><small>", 100.0 * real(row_json, "failure_rate"));
        rt__html_count(f, integer(row_json, "failures"));
        fputs(" of ", f);
        rt__html_count(f, integer(row_json, "runs"));
        fputs(" runs</small>", f);
    } else if (!strcmp(what, "breadth")) {
        long long prs = integer(row_json, "prs");
        fprintf(f, "<b>%lld</b><small>branch%s", integer(row_json, "branches"),
                integer(row_json, "branches") == 1 ? "" : "es");
        if (prs) fprintf(f, " · %lld PR%s", prs, prs == 1 ? "" : "s");
        fputs("</small>", f);
    } else {
        fprintf(f, "<b>%.1f%%</b><small>", 100.0 * real(row_json, "push_failure_chance"));
        rt__html_count(f, integer(row_json, "pushes_failed"));
        fputs(" of ", f);
        rt__html_count(f, integer(row_json, "pushes"));
        fputs(" pushes</small>", f);
    }
    fputs("</span>", f);
}

static void data_attr(FILE *f, const char *name, json_t *row_json, const char *key, bool real_value)
{
    if (!row_json) return;
    if (real_value)
        fprintf(f, " data-%s=\"%.5f\"", name, real(row_json, key));
    else
        fprintf(f, " data-%s=\"%lld\"", name, integer(row_json, key));
}

static void badges(FILE *f, const page *p, const row *w)
{
    if (w->regression_like) {
        char since[16];
        day_label(p->start + (long long)w->first_fail * p->slot_seconds, since, sizeof since);
        fprintf(f,
                "<span class=\"badge regression\" title=\"fails in most runs since its first "
                "failure in the window\">fails since %s</span>",
                since);
    }
    if (w->is_new)
        fputs("<span class=\"badge new\" title=\"flaky now, and no failure before the last 7 "
              "days\">new this week</span>",
              f);
    if (w->is_fixed)
        fputs("<span class=\"badge fixed\" title=\"was flaky; no failure in the last 7 days "
              "though it ran\">fixed this week?</span>",
              f);
    if (w->flaky && !w->is_new && !w->regression_like)
        fprintf(f,
                "<span class=\"badge flaky\" title=\"failed on more than %d branches or pull "
                "requests within %d days\">flaky%s</span>",
                p->q.min_branches, p->q.flaky_window_days, w->flaky_now ? "" : " (earlier)");
    if (!w->flaky && !w->regression_like) {
        json_t *r = w->all ? w->all : w->main;
        long long n = integer(r, "failures");
        fprintf(f, "<span class=\"badge rare\">failed %lld×</span>", n);
    }
    /* the one variant (matrix job, platform/build type) it fails on, when it ran on several;
     * for matrix jobs read as OS, Python and partition, the one OS it fails on */
    size_t nvariants = 0;
    const rt_flaky_variant *v = rt_test_variants_of(&p->variants, w->test, &nvariants);
    const char *kind = p->variants.kind ? p->variants.kind : RT_VARIANT_KIND_GITHUB;
    bool matrix = !strcmp(kind, RT_VARIANT_KIND_GITHUB);
    const char *only = rt_flaky_only_variant(v, nvariants);
    const char *only_os = matrix ? rt_flaky_only_os(v, nvariants) : NULL;
    if (only) {
        char described[160];
        if (matrix)
            rt_matrix_variant_describe(only, described, sizeof described);
        else
            snprintf(described, sizeof described, "%s", only);
        fprintf(f,
                "<span class=\"badge outcome\" title=\"failed on this variant (%s) only, of %zu "
                "that ran it",
                kind, nvariants);
        if (strcmp(described, only)) { /* the matrix job's own name */
            fputs(": ", f);
            rt__html_cut(f, only, 120);
        }
        fputs("\">only on ", f);
        rt__html_cut(f, described, 120);
        fputs("</span>", f);
    } else if (only_os) {
        fprintf(f,
                "<span class=\"badge outcome\" title=\"every variant (matrix job) it failed on "
                "runs %s; others ran it and passed\">only on %s</span>",
                only_os, only_os);
    }
    /* the outcomes the reports gave it that are no plain failure */
    const rt_outcome_labels *l = rt_outcome_labels_find(&p->labels, w->test);
    if (l && l->flaky)
        fprintf(f,
                "<span class=\"badge outcome\" title=\"failed, then passed within one run (the "
                "report's own re-runs)\">FLAKY %ld×</span>",
                l->flaky);
    if (l && l->disabled)
        fprintf(f, "<span class=\"badge outcome\" title=\"reported disabled\">DISABLED %ld×</span>",
                l->disabled);
    if (l && l->collection_error)
        fprintf(f,
                "<span class=\"badge outcome\" title=\"the test file could not be collected: "
                "no test failure\">COLLECTION_ERROR %ld×</span>",
                l->collection_error);
    if (l && l->build_failed)
        fprintf(f,
                "<span class=\"badge outcome\" title=\"the package did not build: no test "
                "failure\">BUILD_FAILED %ld×</span>",
                l->build_failed);
}

static void first_failure(FILE *f, const page *p, json_t *first)
{
    if (!json_is_object(first)) {
        fputs("–", f);
        return;
    }
    const char *time_text = json_string_value(json_object_get(first, "time"));
    const char *project = json_string_value(json_object_get(first, "project"));
    const char *push = json_string_value(json_object_get(first, "push"));
    const char *revision = json_string_value(json_object_get(first, "revision"));
    rt__html_prefix(f, time_text, 10);
    fputs("<small>", f);
    rt__html(f, project);
    if (push && (!revision || strcmp(push, revision) != 0)) {
        fputs(" push ", f);
        rt__html(f, push);
    }
    if (revision) {
        fputs(" ", f);
        bool link = p->treeherder && project && !strchr(p->q.project, '/');
        if (link) rt__html_treeherder_link(f, p->treeherder, project, revision, NULL, 0);
        rt__html_prefix(f, revision, 12);
        if (link) fputs("</a>", f);
    }
    fputs("</small>", f);
}

/* The test's group, when and where its line first failed, and the line. */
static void details(FILE *f, json_t *any, json_t *first)
{
    fputs("<details><summary>", f);
    rt__html(f, json_string_value(json_object_get(any, "group")));
    fputs("</summary><dl>", f);
    if (json_is_object(first)) {
        fputs("<dt>first failure</dt><dd>", f);
        rt__html(f, json_string_value(json_object_get(first, "time")));
        fputs(" on ", f);
        rt__html(f, json_string_value(json_object_get(first, "branch")));
        fputs("</dd><dt>its line</dt><dd class=\"mono\">", f);
        /* "TEST-UNEXPECTED-FAIL | <test> | message": the test is named above */
        const char *line = json_string_value(json_object_get(first, "signature"));
        const char *bar = line ? strstr(line, " | ") : NULL;
        const char *rest = bar ? strstr(bar + 3, " | ") : NULL;
        if (bar && rest && !strncmp(line, "TEST-UNEXPECTED-", 16)) {
            rt__html_prefix(f, line + 16, (size_t)(bar - line - 16));
            fputs(" | ", f);
            rt__html_cut(f, rest + 3, 240);
        } else {
            rt__html_cut(f, line, 300);
        }
        fputs("</dd>", f);
    }
    fputs("</dl></details>", f);
}

static void test_row(FILE *f, const page *p, const row *w)
{
    json_t *any = w->all ? w->all : w->main;
    fprintf(f, "<tr id=\"t-%d\"", w->index);
    if (!w->all || !w->main) fprintf(f, " class=\"v-%s\"", w->all ? "all" : "main");
    if (w->all) fprintf(f, " data-rank-all=\"%d\"", w->rank_all);
    if (w->main) fprintf(f, " data-rank-main=\"%d\"", w->rank_main);
    data_attr(f, "rate-all", w->all, "failure_rate", true);
    data_attr(f, "rate-main", w->main, "failure_rate", true);
    data_attr(f, "breadth-all", w->all, "branches", false);
    data_attr(f, "breadth-main", w->main, "branches", false);
    data_attr(f, "chance-all", w->all, "push_failure_chance", true);
    data_attr(f, "chance-main", w->main, "push_failure_chance", true);
    json_t *first = json_object_get(any, "first_failure");
    if (json_is_object(first)) {
        fputs(" data-first=\"", f);
        rt__html(f, json_string_value(json_object_get(first, "time")));
        fputs("\"", f);
    }
    fputs(">\n<td class=\"test\"><div class=\"name\">", f);
    const char *base = strrchr(w->test, '/');
    if (base && base[1]) {
        fputs("<span class=\"dir\">", f);
        for (const char *part = w->test; part <= base; part = strchr(part, '/') + 1) {
            rt__html_prefix(f, part, (size_t)(strchr(part, '/') - part + 1));
            fputs("<wbr>", f); /* long paths wrap after a slash */
        }
        fputs("</span>", f);
        rt__html(f, base + 1);
    } else {
        rt__html(f, w->test);
    }
    fputs("</div>", f);
    /* On a long page, the tests that failed now and then go without the details of their
     * first failure (the cell beside has its day and push): the file stays small. */
    if (!p->compact || w->flaky || w->regression_like || w->is_fixed) details(f, any, first);
    fputs("</td>\n<td class=\"status\">", f);
    badges(f, p, w);
    fputs("</td>\n<td class=\"n rate\">", f);
    figure(f, w->all, "all", "rate");
    figure(f, w->main, "main", "rate");
    fputs("</td>\n<td class=\"n breadth\">", f);
    figure(f, w->all, "all", "breadth");
    figure(f, w->main, "main", "breadth");
    fputs("</td>\n<td class=\"n chance\">", f);
    figure(f, w->all, "all", "chance");
    figure(f, w->main, "main", "chance");
    fputs("</td>\n<td class=\"first\">", f);
    first_failure(f, p, first);
    fputs("</td>\n<td class=\"chart\">", f);
    chart(f, p, w);
    fputs("</td></tr>\n", f);
}

/* The rows in page order: all branches' order, then those listed on main only. */
static int by_rank(const void *a, const void *b)
{
    const row *x = *(const row *const *)a, *y = *(const row *const *)b;
    int rx = x->rank_all >= 0 ? x->rank_all : 1000000 + x->rank_main;
    int ry = y->rank_all >= 0 ? y->rank_all : 1000000 + y->rank_main;
    return (rx > ry) - (rx < ry);
}

static void card(FILE *f, const char *cls, long long n, const char *label, const char *note,
                 const page *p, bool (*pick)(const row *))
{
    fprintf(f, "<div class=\"card %s\"><div class=\"big\">", cls);
    rt__html_count(f, n);
    fprintf(f, "</div><div class=\"label\">%s</div><div class=\"note\">%s</div>", label, note);
    if (pick) {
        fputs("<ul class=\"names\">", f);
        int shown = 0;
        for (size_t i = 0; i < p->nrows && shown < 4; i++) {
            const row *w = p->order[i];
            if (!pick(w)) continue;
            fprintf(f, "<li><a href=\"#t-%d\" title=\"", w->index);
            rt__html(f, w->test);
            fputs("\">", f);
            const char *base = strrchr(w->test, '/');
            rt__html(f, base && base[1] ? base + 1 : w->test);
            fputs("</a></li>", f);
            shown++;
        }
        fputs("</ul>", f);
    }
    fputs("</div>\n", f);
}

static bool pick_new(const row *w) { return w->is_new; }
static bool pick_fixed(const row *w) { return w->is_fixed; }
static bool pick_regression(const row *w) { return w->regression_like; }
static bool pick_flaky_now(const row *w) { return w->flaky_now; }

static void summary(FILE *f, const page *p)
{
    long long flaky_now = 0, is_new = 0, fixed = 0, regression = 0;
    size_t i;
    json_t *r;
    json_array_foreach(p->now, i, r) flaky_now += json_is_true(json_object_get(r, "flaky"));
    for (size_t k = 0; k < p->nrows; k++) {
        is_new += p->rows[k].is_new;
        fixed += p->rows[k].is_fixed;
        regression += p->rows[k].regression_like;
    }
    char note[160];
    fputs("<section class=\"cards\" id=\"summary\">\n", f);
    snprintf(note, sizeof note, "failed on more than %d branches, try pushes or PRs within %d days",
             p->q.min_branches, p->q.flaky_window_days);
    card(f, "flaky", flaky_now, "flaky now", note, p, pick_flaky_now);
    card(f, "new", is_new, "new this week", "flaky now, no failure before the last 7 days", p,
         pick_new);
    card(f, "fixed", fixed, "fixed this week",
         "flaky before, no failure in the last 7 days though it ran", p, pick_fixed);
    if (regression)
        card(f, "regression", regression, "failing like a regression",
             "fails in most runs since it started failing", p, pick_regression);
    json_t *c = p->coverage;
    fputs("<div class=\"card\"><div class=\"big\">", f);
    rt__html_count(f, integer(c, "runs"));
    fputs("</div><div class=\"label\">runs covered</div><div class=\"note\">", f);
    rt__html_count(f, integer(c, "main_runs"));
    fputs(" on main branches, ", f);
    rt__html_count(f, integer(c, "runs") - integer(c, "main_runs"));
    fputs(" elsewhere</div></div>\n<div class=\"card\"><div class=\"big\">", f);
    rt__html_count(f, integer(c, "other_branches"));
    fputs("</div><div class=\"label\">branches under review covered</div><div class=\"note\">"
          "a try author, a PR or a project each (",
          f);
    rt__html_count(f, integer(c, "prs"));
    fputs(" pull requests); ", f);
    rt__html_count(f, integer(c, "pushes"));
    fputs(" pushes in all, ", f);
    rt__html_count(f, integer(c, "main_pushes"));
    fputs(" on main</div></div>\n</section>\n", f);
}

/* What the data rests on: runs per day (main branches dark, the others light) with the gaps
 * hatched, the gaps and notes in words, the projects. All from the coverage object. Long because
 * it writes the panel's HTML piece by piece, escaping each value: the SVG strip of days and gap
 * bands, its legend, the gaps in words, then up to 8 projects and the notes. */
static void coverage_panel(FILE *f, const page *p)
{
    json_t *c = p->coverage;
    fputs("<section class=\"coverage\" id=\"coverage\">\n<div><h2>What the data rests on</h2>", f);
    json_t *days = json_object_get(c, "days");
    long long most = 1;
    size_t i;
    json_t *d;
    json_array_foreach(days, i, d) if (integer(d, "runs") > most) most = integer(d, "runs");
    int bar = 480 / p->days, h = 64, width = bar * p->days;
    fprintf(f,
            "<svg class=\"strip\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">"
            "<title>runs recorded per day</title>",
            width, h + 14, width, h + 14);
    json_array_foreach(days, i, d)
    {
        struct tm tm = {0};
        const char *day = json_string_value(json_object_get(d, "day"));
        if (!day || !strptime(day, "%Y-%m-%d", &tm)) continue;
        long long at = (long long)timegm(&tm);
        int x = (int)((at - p->start) / 86400) * bar;
        int all = (int)lround((double)integer(d, "runs") * h / (double)most);
        int main_h = (int)lround((double)integer(d, "main_runs") * h / (double)most);
        fprintf(f, "<rect class=\"other\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", x,
                h - all, bar - 1, all - main_h);
        fprintf(f, "<rect class=\"main\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"><title>", x,
                h - main_h, bar - 1, main_h);
        rt__html(f, day);
        fprintf(f, ": %lld runs, %lld on main</title></rect>", integer(d, "runs"),
                integer(d, "main_runs"));
    }
    json_t *gap;
    json_array_foreach(json_object_get(c, "gaps"), i, gap)
    {
        struct tm a = {0}, b = {0};
        const char *from = json_string_value(json_object_get(gap, "from"));
        const char *to = json_string_value(json_object_get(gap, "to"));
        if (!from || !to || !strptime(from, "%Y-%m-%dT%H:%M:%SZ", &a) ||
            !strptime(to, "%Y-%m-%dT%H:%M:%SZ", &b))
            continue;
        double x0 = (double)(timegm(&a) - p->start) * bar / 86400.0;
        double x1 = (double)(timegm(&b) - p->start) * bar / 86400.0;
        fprintf(f, "<rect class=\"gapband\" x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\"/>", x0,
                x1 - x0 < 1 ? 1 : x1 - x0, h);
    }
    char label[16];
    day_label(p->start, label, sizeof label);
    fprintf(f, "<text x=\"0\" y=\"%d\">%s</text>", h + 12, label);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">now</text></svg>\n", width, h + 12);
    fputs("<div class=\"legend\"><span><i style=\"background:#57606a\"></i>runs on main "
          "branches</span><span><i style=\"background:#b6c2d1\"></i>elsewhere (try, PRs)</span>"
          "<span><i style=\"background:#f3b9bd\"></i>collection gap</span></div></div>\n<div>",
          f);
    fputs("<h2>Collection gaps</h2><ul>", f);
    size_t ngaps = json_array_size(json_object_get(c, "gaps"));
    json_array_foreach(json_object_get(c, "gaps"), i, gap)
    {
        fputs("<li class=\"gap\">", f);
        rt__html(f, json_string_value(json_object_get(gap, "what")));
        const char *from = json_string_value(json_object_get(gap, "from"));
        const char *to = json_string_value(json_object_get(gap, "to"));
        if (from && to) {
            fputs(": ", f);
            rt__html_when(f, from);
            fputs(" – ", f);
            rt__html_when(f, to);
        }
        if (json_is_number(json_object_get(gap, "hours")))
            fprintf(f, " (%.0f h)", json_number_value(json_object_get(gap, "hours")));
        const char *detail = json_string_value(json_object_get(gap, "detail"));
        if (detail) {
            fputs(" — ", f);
            rt__html(f, detail);
        }
        fputs("</li>", f);
    }
    if (!ngaps)
        fprintf(f, "<li>none: no stretch of %.0f hours or more without a run</li>",
                json_number_value(json_object_get(c, "gap_threshold_hours")));
    fputs("</ul><h2>Sources</h2><ul>", f);
    json_t *project;
    int shown = 0;
    json_array_foreach(json_object_get(c, "projects"), i, project)
    {
        if (shown++ == 8) {
            fprintf(f, "<li>… and %zu more</li>",
                    json_array_size(json_object_get(c, "projects")) - 8);
            break;
        }
        fputs("<li><b>", f);
        rt__html(f, json_string_value(json_object_get(project, "project")));
        fputs("</b> (", f);
        rt__html(f, json_string_value(json_object_get(project, "branch_class")));
        fputs(", ", f);
        rt__html(f, json_string_value(json_object_get(project, "source")));
        fputs("): ", f);
        rt__html_count(f, integer(project, "runs"));
        fputs(" runs, ", f);
        rt__html_count(f, integer(project, "pushes"));
        fputs(" pushes, last ", f);
        rt__html_when(f, json_string_value(json_object_get(project, "last_run")));
        fputs("</li>", f);
    }
    json_t *note;
    json_array_foreach(json_object_get(c, "notes"), i, note)
    {
        fputs("<li class=\"muted\">", f);
        rt__html(f, json_string_value(note));
        fputs("</li>", f);
    }
    fputs("</ul></div>\n</section>\n", f);
}

static void tests_table(FILE *f, const page *p)
{
    fputs("<h2 id=\"tests-title\">Failing tests</h2>\n<div class=\"controls\">"
          "<span class=\"segmented\" role=\"radiogroup\" aria-label=\"branches\">"
          "<input type=\"radio\" name=\"scope\" id=\"scope-all\" value=\"all\" checked>"
          "<label for=\"scope-all\">All branches</label>"
          "<input type=\"radio\" name=\"scope\" id=\"scope-main\" value=\"main\">"
          "<label for=\"scope-main\">Main only</label></span>"
          "<input type=\"search\" id=\"search\" class=\"js-only\" hidden placeholder=\"Search "
          "tests\" aria-label=\"search tests\">"
          "<span class=\"count js-only\" id=\"count\" hidden></span>"
          "<span class=\"pager js-only\" hidden><button type=\"button\" id=\"prev\">‹ "
          "previous</button><span id=\"where\"></span><button type=\"button\" id=\"next\">next "
          "›</button></span></div>\n",
          f);
    fputs("<div class=\"legend\"><span><i style=\"background:#b6c2d1\"></i>a run that "
          "passed</span><span><i style=\"background:#cf222e\"></i>failed on a main "
          "branch</span><span><i style=\"background:#e36209\"></i>failed elsewhere (try, "
          "PRs)</span><span>upper lane: main branches, lower lane: the others (all branches "
          "only)</span><span>line: daily failure rate</span><span><i "
          "style=\"background:#fff8c5\"></i>last 7 days</span></div>\n",
          f);
    fprintf(f, "<table id=\"tests\" style=\"--dot:%d;--gap:%d\">\n<thead><tr>", p->dot,
            p->pitch - p->dot);
    fputs(
        "<th data-sort=\"test\" aria-sort=\"none\"><button type=\"button\">Test</button></th>"
        "<th data-sort=\"rank\" aria-sort=\"ascending\"><button "
        "type=\"button\">Status</button></th>"
        "<th data-sort=\"rate\" aria-sort=\"none\" class=\"n\"><button type=\"button\">Failure "
        "rate</button></th>"
        "<th data-sort=\"breadth\" aria-sort=\"none\" class=\"n\"><button "
        "type=\"button\">Breadth</button></th>"
        "<th data-sort=\"chance\" aria-sort=\"none\" class=\"n\"><button type=\"button\">Chance a "
        "push sees it</button></th>"
        "<th data-sort=\"first\" aria-sort=\"none\"><button type=\"button\">First "
        "failure</button></th><th>",
        f);
    chart_axis(f, p);
    fputs("</th></tr></thead>\n<tbody>\n", f);
    for (size_t i = 0; i < p->nrows; i++) test_row(f, p, p->order[i]);
    fputs("</tbody>\n</table>\n", f);
    if (!p->nrows) fputs("<p class=\"empty\">No test failed in this window.</p>\n", f);
}

static int write_page(FILE *f, const void *ctx)
{
    const page *p = ctx;
    const char *link = p->link;
    char title[512], subtitle[512];
    snprintf(title, sizeof title, "Flaky tests of %s", p->q.project);
    snprintf(subtitle, sizeof subtitle,
             "%.10s – %.10s %.5s UTC (%d days), every branch recorded in the test history. "
             "Flaky: failed on more than %d branches, try pushes or pull requests within %d "
             "days.",
             p->start_text, p->until_text, p->until_text + 11, p->days, p->q.min_branches,
             p->q.flaky_window_days);
    rt__html_page_start(f, title, "flaky", link, subtitle);
    chart_defs(f, p);
    summary(f, p);
    coverage_panel(f, p);
    tests_table(f, p);
    fputs("<script type=\"application/json\" id=\"coverage-data\">", f);
    rt__html_json(f, p->coverage);
    fputs("</script>\n", f);
    rt__html_page_end(f, rt__flaky_js);
    return ferror(f) ? -1 : 0;
}

/* Long because it is one case per option, then a linear sequence of loads (the window, the
 * flakes of all branches, of main only and of the flaky window, the rows, slots, marks and
 * coverage), the page written and its summary, sharing cleanup through goto out. */
int rt_cli_report(int argc, char **argv, rt_config *cfg)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--decisions")) return rt__cli_report_decisions(argc, argv, cfg);
    static const struct option options[] = {
        {"project", required_argument, NULL, 'p'},
        {"out", required_argument, NULL, 'o'},
        {"window", required_argument, NULL, 'w'},
        {"until", required_argument, NULL, 'u'},
        {"min-branches", required_argument, NULL, 'n'},
        {"limit", required_argument, NULL, 'l'},
        {"link", required_argument, NULL, 'k'},
        {"treeherder", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    page p = {.q = {.window = "30 days",
                    .until = "now",
                    .min_branches = cfg->history_flaky_min_branches,
                    .flaky_window_days = cfg->history_flaky_window_days,
                    .limit = DEFAULT_LIMIT},
              .treeherder = cfg->treeherder_url};
    const char *out_path = NULL, *link = NULL;
    char window[64], trusted[512];
    p.q.trusted = rt__cli_trusted_associations(cfg, trusted, sizeof trusted);
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'p': p.q.project = optarg; break;
        case 'o': out_path = optarg; break;
        case 'w':
            if (rt__cli_parse_duration(optarg, window, sizeof window) != 0) {
                rt_log_error("--window wants a number and h, d or w", "value", optarg);
                return 2;
            }
            p.q.window = window;
            break;
        case 'u': p.q.until = optarg; break;
        case 'n': p.q.min_branches = atoi(optarg); break;
        case 'l': p.q.limit = atoi(optarg); break;
        case 'k': link = optarg; break;
        case 't': p.treeherder = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!p.q.project || !out_path || optind < argc || p.q.limit <= 0 || p.q.limit > MAX_LIMIT ||
        p.q.min_branches < 0) {
        usage(stderr);
        return 2;
    }
    if (p.treeherder && !rt__html_safe_base_url(p.treeherder)) {
        rt_log_error("--treeherder (or treeherder_url) is not a plain http(s) URL; no links",
                     "value", p.treeherder);
        p.treeherder = NULL;
    }
    int status = 1;
    rt_pg *pg = NULL, *pg2 = NULL;
    char exact_window[48], week[32];
    if (rt__cli_connect_read(cfg, "cli", &pg) != 0) goto out;
    if (load_window(&p, pg) != 0) goto out;
    /* Every query asks about the same instants: [start, until). */
    snprintf(exact_window, sizeof exact_window, "%lld seconds", p.until - p.start);
    p.q.until = p.until_text;
    p.q.window = exact_window;
    /* Two connections, so that Postgres reads on both cores: the main-only window on the
     * second while the first reads all branches, then the last week on the second while the
     * first reads the charts and the coverage. One connection when a second cannot be opened. */
    rt__flakes_query main_only = p.q, now = p.q;
    main_only.main_only = true;
    snprintf(week, sizeof week, "%d days", p.q.flaky_window_days);
    now.window = week;
    bool two =
        rt__cli_connect_read(cfg, "cli", &pg2) == 0 && rt__cli_flakes_send(pg2, &main_only) == 0;
    if (!two) rt_log_warn("reading the report's windows one after another, on one connection");
    if (!(p.all = rt__cli_flakes(pg, &p.q))) goto out;
    if (!(p.main = two ? rt__cli_flakes_wait(pg2) : rt__cli_flakes(pg, &main_only))) goto out;
    two = two && rt__cli_flakes_send(pg2, &now) == 0;
    /* the flaky flag counts the repository's branches and trusted fork PRs only */
    if (rt__cli_flakes_trust(pg, &p.q, p.all) != 0 ||
        rt__cli_flakes_trust(pg, &main_only, p.main) != 0)
        goto out;
    if (merge_rows(&p) != 0) goto out;
    if (choose_slots(&p, pg) != 0) goto out;
    geometry(&p);
    if (load_marks(&p, pg) != 0) goto out;
    if (rt_outcome_labels_read(pg, p.q.project, p.until_text, exact_window, &p.labels) != RT_OK ||
        rt_test_variants_read(pg, p.q.project, p.until_text, exact_window, &p.variants) != RT_OK) {
        rt_log_error("cannot query the test history", "error", rt_pg_errstr(pg));
        goto out;
    }
    if (!(p.coverage = rt__cli_coverage(pg, cfg, p.q.project, p.start_text, p.until_text,
                                        p.until - p.start)))
        goto out;
    if (!(p.now = two ? rt__cli_flakes_wait(pg2) : rt__cli_flakes(pg, &now))) goto out;
    if (rt__cli_flakes_trust(pg, &now, p.now) != 0) goto out;
    classify(&p);
    if (!(p.order = calloc(p.nrows + 1, sizeof *p.order))) goto out;
    for (size_t k = 0; k < p.nrows; k++) p.order[k] = &p.rows[k];
    qsort(p.order, p.nrows, sizeof *p.order, by_rank);
    p.link = link;
    if (rt__cli_write_file(out_path, "the report", write_page, &p) != 0) goto out;
    size_t flaky_now = 0, on_main = 0, on_all = 0, i;
    json_t *r;
    json_array_foreach(p.now, i, r) flaky_now += json_is_true(json_object_get(r, "flaky"));
    for (size_t k = 0; k < p.nrows; k++) {
        on_all += p.rows[k].all != NULL;
        on_main += p.rows[k].main != NULL;
    }
    printf("%s: %zu tests (all branches), %zu (main only), %zu flaky now\n", out_path, on_all,
           on_main, flaky_now);
    status = 0;
out:
    for (size_t k = 0; k < p.nrows; k++) {
        free(p.rows[k].runs);
        free(p.rows[k].fails);
    }
    free(p.rows);
    free(p.order);
    json_decref(p.all);
    json_decref(p.main);
    json_decref(p.now);
    json_decref(p.coverage);
    rt_outcome_labels_free(&p.labels);
    rt_test_variants_free(&p.variants);
    rt_pg_free(pg2);
    rt_pg_free(pg);
    return status;
}
