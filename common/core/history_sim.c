/* SPDX-License-Identifier: MPL-2.0 */
/* history_sim.c - a realistic, deterministic test history (see history_sim.h). Pushes are
 * drawn once at the start, day by day; their runs are drawn one by one as they are asked
 * for, all from one xoshiro256** stream, so the same options give the same rows. */
#include "common/core/history_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/decide_sim.h"

#define DAY         86400LL
#define HOUR        3600LL
#define NCHUNKS     8
#define NPLATFORMS  4
#define NOISE       0.0002 /* the default background failure rate */
#define GAP_DAYS    17.0   /* the collection gap starts this long before until */
#define GAP_SECONDS (20 * HOUR)
#define TRY_AUTHORS 60 /* developers pushing to try; each one's pushes are one branch */

enum project_kind { AUTOLAND, CENTRAL, TRY, HOSTILE_TRY };

static const char *const PROJECTS[] = {"autoland", "mozilla-central", "try",
                                       "try-<svg onload=alert('project')>"};
static const long long FIRST_PUSH[] = {181000, 41000, 2100000, 9000};

static const char *const PLATFORMS[NPLATFORMS] = {"linux1804-64-qr", "windows11-64-2009-qr",
                                                  "macosx1100-64-qr", "android-em-7.0-x86_64-qr"};

/* The groups of the recorded errorsummary, and the groups of the recorded bug suggestions. */
static const char *const GROUPS[] = {
    "dom/base/test/browser.ini",
    "browser/components/contextualidentity/test/browser/browser.ini",
    "browser/base/content/test/tabMediaIndicator/browser.ini",
    "gfx/tests/browser/browser.ini",
    "browser/components/downloads/test/browser/browser.ini",
    "toolkit/components/satchel/test/browser/browser.ini",
    "toolkit/components/aboutperformance/tests/browser/browser.ini",
    "toolkit/components/aboutprocesses/tests/browser/browser.ini",
    "security/manager/ssl/tests/mochitest/browser/browser.ini",
    "toolkit/components/mozprotocol/tests/browser.ini",
    "netwerk/test/browser/browser.ini",
    "browser/base/content/test/siteIdentity/browser.ini",
    "dom/workers/test/browser.ini",
    "browser/components/preferences/tests/browser.ini",
    "browser/base/content/test/about/browser.ini",
    "browser/base/content/test/popups/browser.ini",
    "accessible/tests/browser/tree/browser.ini",
    "toolkit/components/remotepagemanager/tests/browser/browser.ini",
    "dom/xhr/tests/browser.ini",
    "dom/security/test/mixedcontentblocker/browser.ini",
    "browser/components/tests/browser/whats_new_page/browser.ini",
    "toolkit/content/tests/browser/browser.ini",
    "dom/broadcastchannel/tests/browser.ini",
    "caps/tests/mochitest/browser.ini",
    "browser/components/aboutconfig/test/browser/browser.ini",
    "browser/components/pocket/test/browser.ini",
    "accessible/tests/browser/browser.ini",
    "toolkit/components/pictureinpicture/tests/browser.ini",
    "dom/ipc/tests/browser.ini",
    "dom/ipc/tests/JSWindowActor/browser.ini",
    "devtools/client/netmonitor/src/har/test/browser.ini",
    "/trusted-types",
    "/css/css-break",
};
#define NGROUPS (sizeof GROUPS / sizeof GROUPS[0])
static const char HOSTILE_GROUP[] = "dom/<img src=x onerror=alert('group')>/browser.ini";

static const char *const SUBJECTS[] = {
    "tab",   "window",  "download", "pref",     "cache",    "focus", "popup",
    "media", "scroll",  "history",  "bookmark", "session",  "print", "search",
    "zoom",  "sidebar", "context",  "drag",     "keyboard", "menu",  "notification",
    "perm",  "reader",  "sync",     "theme",    "urlbar",   "video", "worker"};
static const char *const VERBS[] = {"Basic",  "Close", "Open",     "Reload",  "Restore",
                                    "Switch", "Crash", "Leak",     "Resize",  "Select",
                                    "Update", "Load",  "Navigate", "Persist", "Remove"};

/* Background failures: (status, subtest, message), by test. */
static const char *const BACKGROUND_FAILURES[][3] = {
    {"FAIL", "Test timed out", ""},
    {"FAIL", "Uncaught exception",
     "TypeError: can't access property \"linkedBrowser\", tab is null"},
    {"TIMEOUT", NULL, "application timed out after 370 seconds with no output"},
    {"FAIL", "Found an unexpected tab at the end of test run", ""},
    {"FAIL", "A promise chain failed to handle a rejection", "NS_ERROR_NOT_AVAILABLE"},
    {"FAIL", "leaked 1 window(s) until shutdown", "[url = about:blank]"},
};
#define NBACKGROUND (sizeof BACKGROUND_FAILURES / sizeof BACKGROUND_FAILURES[0])

/* The tests planted (history_sim.h): kind, test, group, rate, status, subtest, message,
 * platform (-1: all), since and until in days before the end (0: none). */
typedef struct plant {
    const char *kind;
    const char *test;
    const char *group;
    double rate;
    const char *status, *subtest, *message;
    int platform;
    double since_days, until_days;
} plant;

static const plant PLANTS[] = {
    {"flaky", "toolkit/components/pictureinpicture/tests/browser_fullscreen.js",
     "toolkit/components/pictureinpicture/tests/browser.ini", 0.35, "FAIL", "Uncaught exception",
     "undefined - timed out after 50 tries.", -1, 0, 0},
    {"flaky", "toolkit/components/pictureinpicture/tests/browser_videoSelection.js",
     "toolkit/components/pictureinpicture/tests/browser.ini", 0.20, "FAIL", "Test timed out", "",
     -1, 0, 0},
    {"flaky", "dom/ipc/tests/browser_crash_oopiframe.js", "dom/ipc/tests/browser.ini", 0.12, "FAIL",
     "Uncaught exception", "Error: Didn't receive the crash report in time", -1, 0, 0},
    {"flaky", "browser/components/downloads/test/browser/browser_download_overwrite.js",
     "browser/components/downloads/test/browser/browser.ini", 0.06, "FAIL",
     "The file should have been overwritten", "false == true", -1, 0, 0},
    {"flaky", "netwerk/test/browser/browser_post_auth.js", "netwerk/test/browser/browser.ini", 0.03,
     "TIMEOUT", NULL, "Test timed out", -1, 0, 0},
    {"flaky", "dom/workers/test/browser_fileURL.js", "dom/workers/test/browser.ini", 0.015, "FAIL",
     "Worker loaded the file URL", "false == true", -1, 0, 0},
    {"windows-flaky", "browser/base/content/test/popups/browser_popup_close_main_window.js",
     "browser/base/content/test/popups/browser.ini", 0.30, "FAIL", "Test timed out", "", 1, 0, 0},
    /* The lines of the recorded bug suggestions: the demo's decisions show their history. */
    {"flaky", "devtools/client/netmonitor/src/har/test/browser_net_har_copy_all_as_har.js",
     "devtools/client/netmonitor/src/har/test/browser.ini", 0.08, "FAIL",
     "There must be some page title", "", -1, 0, 0},
    {"flaky", "toolkit/content/tests/browser/browser_suspend_videos_outside_viewport.js",
     "toolkit/content/tests/browser/browser.ini", 0.05, "FAIL", "video decoding is suspended",
     "false == true - got false, expected true (operator ==)", -1, 0, 0},
    {"flaky", "/trusted-types/WorkerGlobalScope-eval.html", "/trusted-types", 0.03, "CRASH", NULL,
     "expected OK", -1, 0, 0},
    {"flaky", "/css/css-break/hit-test-inline-fragmentation-with-border-radius.html",
     "/css/css-break", 0.02, "CRASH", NULL, "expected OK", -1, 0, 0},
    {"new", "browser/components/preferences/tests/browser_search_subdialog_tooltip.js",
     "browser/components/preferences/tests/browser.ini", 0.15, "FAIL", "Tooltip is shown",
     "false == true", -1, 4.5, 0},
    {"fixed", "accessible/tests/browser/tree/browser_aria_owns.js",
     "accessible/tests/browser/tree/browser.ini", 0.18, "FAIL", "Test timed out", "", -1, 0, 9.3},
    {"fixed", "toolkit/components/satchel/test/browser/browser_privbrowsing_perwindowpb.js",
     "toolkit/components/satchel/test/browser/browser.ini", 0.08, "FAIL", "Uncaught exception",
     "TypeError: win is null", -1, 0, 11},
    {"regression", "browser/base/content/test/siteIdentity/browser_identityPopup_clearSiteData.js",
     "browser/base/content/test/siteIdentity/browser.ini", 0.97, "FAIL", "Site data was cleared",
     "got 2, expected 0", -1, 6, 0},
};
#define NPLANTS (sizeof PLANTS / sizeof PLANTS[0])

static const plant HOSTILE_PLANTS[] = {
    {"flaky", "dom/<script>alert('test')</script>/browser_evil.js", HOSTILE_GROUP, 0.25, "FAIL",
     "</td></tr><script>alert(\"subtest\")</script>", "<b onmouseover=alert(1)>bold</b> & 'q'", -1,
     0, 0},
    {"flaky", "dom/\"quoted\" & 'apostrophe' <b>/browser_quote.js", HOSTILE_GROUP, 0.2, "FAIL",
     "javascript:alert('href')", "\"><img src=x onerror=alert('msg')>", -1, 0, 0},
    {"flaky", "intl/ünïcödé/✓/browser_ünïcödé_テスト.js", HOSTILE_GROUP, 0.15, "TIMEOUT", NULL,
     "délai dépassé — タイムアウト", -1, 0, 0},
};
#define NHOSTILE (sizeof HOSTILE_PLANTS / sizeof HOSTILE_PLANTS[0])
static const char HOSTILE_REVISION[] = "\"><script>alert('rev')</script>";

typedef struct test_info {
    char *name;
    size_t group;
    const plant *plant; /* NULL: background only */
    long long since, until;
} test_info;

typedef struct push {
    long long at;
    enum project_kind project;
    long long id;
    char revision[48];
    bool regression;            /* carries the regression */
    unsigned platforms, chunks; /* bit masks */
} push;

struct rt_hsim {
    rt_hsim_options o;
    rt_sim_rng rng;
    long long start, gap_start, regression_at;
    size_t ngroups;
    const char *groups[NGROUPS + 1];
    test_info *tests;
    size_t ntests;
    size_t *group_tests; /* tests ordered by group */
    size_t group_first[NGROUPS + 2];
    push *pushes;
    size_t npushes, cap_pushes;
    size_t push_at, platform_at, chunk_at; /* the next run */
    rt_hsim_planted *planted;
    size_t nplanted;
};

static unsigned below(rt_sim_rng *rng, unsigned n) { return (unsigned)(rt_sim_rng_next(rng) % n); }

static void hex_revision(rt_sim_rng *rng, char out[41])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 40; i++) out[i] = digits[rt_sim_rng_next(rng) & 15];
    out[40] = '\0';
}

static void slugid(rt_sim_rng *rng, char out[23])
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (int i = 0; i < 21; i++) out[i] = alphabet[rt_sim_rng_next(rng) & 63];
    out[21] = "AQgw"[rt_sim_rng_next(rng) & 3]; /* a v4 slugid's last character */
    out[22] = '\0';
}

static void iso_time(long long at, char out[32])
{
    time_t t = (time_t)at;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int add_push(rt_hsim *s, long long at, enum project_kind project)
{
    if (s->npushes == s->cap_pushes) {
        size_t cap = s->cap_pushes ? s->cap_pushes * 2 : 256;
        push *more = realloc(s->pushes, cap * sizeof *more);
        if (!more) return RT_ENOMEM;
        s->pushes = more;
        s->cap_pushes = cap;
    }
    push *p = &s->pushes[s->npushes++];
    memset(p, 0, sizeof *p);
    p->at = at;
    p->project = project;
    if (project == HOSTILE_TRY)
        snprintf(p->revision, sizeof p->revision, "%s", HOSTILE_REVISION);
    else
        hex_revision(&s->rng, p->revision);
    switch (project) {
    case AUTOLAND:
        p->platforms = 3u | (below(&s->rng, 2) ? 4u : 0) | (below(&s->rng, 10) < 3 ? 8u : 0);
        p->chunks = (1u << NCHUNKS) - 1;
        break;
    case CENTRAL:
        p->platforms = (1u << NPLATFORMS) - 1;
        p->chunks = (1u << NCHUNKS) - 1;
        break;
    case TRY:
    case HOSTILE_TRY:
        p->platforms = 1u << below(&s->rng, NPLATFORMS);
        if (below(&s->rng, 2)) p->platforms |= 1u << below(&s->rng, NPLATFORMS);
        for (int c = 0; c < NCHUNKS; c++)
            if (below(&s->rng, 8) < 5) p->chunks |= 1u << c;
        if (!p->chunks) p->chunks = 1u << below(&s->rng, NCHUNKS);
        break;
    }
    return RT_OK;
}

static int by_time(const void *a, const void *b)
{
    const push *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    return x->project < y->project ? -1 : x->project > y->project;
}

/* Every push of the history, in time order, with ids per project in that order, and which
 * carry the regression. */
static int draw_pushes(rt_hsim *s)
{
    long long day0 = s->start - s->start % DAY;
    for (long long day = day0; day < s->o.until; day += DAY) {
        unsigned autoland = 10 + below(&s->rng, 6), tries = 14 + below(&s->rng, 8);
        for (unsigned i = 0; i < autoland; i++)
            if (add_push(s, day + 6 * HOUR + (long long)below(&s->rng, 17 * 3600), AUTOLAND))
                return RT_ENOMEM;
        for (unsigned i = 0; i < tries; i++)
            if (add_push(s, day + (long long)below(&s->rng, 24 * 3600), TRY)) return RT_ENOMEM;
        if (add_push(s, day + 10 * HOUR + 30 * 60, CENTRAL) ||
            add_push(s, day + 22 * HOUR + 30 * 60, CENTRAL))
            return RT_ENOMEM;
        if (s->o.hostile && add_push(s, day + (long long)below(&s->rng, 24 * 3600), HOSTILE_TRY))
            return RT_ENOMEM;
    }
    /* Pushes outside the window: drawn (so the stream stays the same), then dropped. */
    size_t kept = 0;
    for (size_t i = 0; i < s->npushes; i++)
        if (s->pushes[i].at >= s->start - 2 * HOUR && s->pushes[i].at < s->o.until)
            s->pushes[kept++] = s->pushes[i];
    s->npushes = kept;
    qsort(s->pushes, s->npushes, sizeof *s->pushes, by_time);
    long long next_id[4];
    memcpy(next_id, FIRST_PUSH, sizeof next_id);
    bool landed = false;
    for (size_t i = 0; i < s->npushes; i++) {
        push *p = &s->pushes[i];
        p->id = next_id[p->project]++;
        if (p->at < s->regression_at) continue;
        if (p->project == AUTOLAND && !landed) {
            landed = true;
            p->regression = true;
            for (size_t k = 0; k < s->nplanted; k++)
                if (!strcmp(s->planted[k].kind, "regression")) {
                    snprintf(s->planted[k].push, sizeof s->planted[k].push, "%lld", p->id);
                    snprintf(s->planted[k].revision, sizeof s->planted[k].revision, "%s",
                             p->revision);
                    s->planted[k].since = p->at;
                    snprintf(s->planted[k].project, sizeof s->planted[k].project, "%s",
                             PROJECTS[AUTOLAND]);
                }
            s->regression_at = p->at;
        } else if (landed) {
            /* autoland carries it from then on, central from its next merge, and most try
             * pushes are based on a tree that has it */
            p->regression =
                p->project == AUTOLAND || p->project == CENTRAL || below(&s->rng, 100) < 85;
        }
    }
    return RT_OK;
}

static int add_test(rt_hsim *s, char *name, size_t group, const plant *pl)
{
    test_info *t = &s->tests[s->ntests++];
    t->name = name;
    t->group = group;
    t->plant = pl;
    if (!name) return RT_ENOMEM;
    if (pl && pl->since_days > 0) t->since = s->o.until - (long long)(pl->since_days * DAY);
    if (pl && pl->until_days > 0) t->until = s->o.until - (long long)(pl->until_days * DAY);
    if (pl) {
        rt_hsim_planted *p = &s->planted[s->nplanted++];
        memset(p, 0, sizeof *p);
        p->kind = pl->kind;
        snprintf(p->test, sizeof p->test, "%s", name);
        p->rate = pl->rate;
        p->since = t->since;
        p->until = t->until;
    }
    return RT_OK;
}

static size_t group_index(const rt_hsim *s, const char *name)
{
    for (size_t g = 0; g < s->ngroups; g++)
        if (!strcmp(s->groups[g], name)) return g;
    return 0;
}

/* The test names: the planted ones, then "<dir of its group>/browser_<subject><Verb>.js". */
static int make_tests(rt_hsim *s)
{
    size_t total = (size_t)s->o.tests + (s->o.hostile ? NHOSTILE : 0);
    s->tests = calloc(total, sizeof *s->tests);
    s->planted = calloc(NPLANTS + NHOSTILE, sizeof *s->planted);
    s->group_tests = calloc(total, sizeof *s->group_tests);
    if (!s->tests || !s->planted || !s->group_tests) return RT_ENOMEM;
    for (size_t i = 0; i < NPLANTS; i++)
        if (add_test(s, strdup(PLANTS[i].test), group_index(s, PLANTS[i].group), &PLANTS[i]))
            return RT_ENOMEM;
    const size_t nsubjects = sizeof SUBJECTS / sizeof SUBJECTS[0];
    const size_t nverbs = sizeof VERBS / sizeof VERBS[0];
    for (size_t i = 0; s->ntests < (size_t)s->o.tests; i++) {
        size_t group = i % NGROUPS;
        const char *manifest = GROUPS[group];
        const char *slash = strrchr(manifest, '/');
        int dir = slash ? (int)(slash - manifest) : 0;
        char suffix[24] = "";
        if (i >= nsubjects * nverbs)
            snprintf(suffix, sizeof suffix, "_%zu", i / (nsubjects * nverbs));
        const char *ext = manifest[0] == '/' ? ".html" : ".js";
        char *name = NULL;
        if (asprintf(&name, "%.*s/%s%s%s%s%s", dir, manifest, manifest[0] == '/' ? "" : "browser_",
                     SUBJECTS[i % nsubjects], VERBS[(i / nsubjects) % nverbs], suffix, ext) < 0)
            name = NULL;
        if (add_test(s, name, group, NULL)) return RT_ENOMEM;
    }
    if (s->o.hostile)
        for (size_t i = 0; i < NHOSTILE; i++)
            if (add_test(s, strdup(HOSTILE_PLANTS[i].test), s->ngroups - 1, &HOSTILE_PLANTS[i]))
                return RT_ENOMEM;
    /* tests by group (counting sort) */
    for (size_t i = 0; i < s->ntests; i++) s->group_first[s->tests[i].group + 1]++;
    for (size_t g = 0; g < s->ngroups; g++) s->group_first[g + 1] += s->group_first[g];
    size_t fill[NGROUPS + 2];
    memcpy(fill, s->group_first, sizeof fill);
    for (size_t i = 0; i < s->ntests; i++) s->group_tests[fill[s->tests[i].group]++] = i;
    return RT_OK;
}

int rt_hsim_new(const rt_hsim_options *options, rt_hsim **out, char *errstr)
{
    *out = NULL;
    if (options->days < 1 || options->days > RT_HSIM_MAX_DAYS) {
        rt_set_errstr(errstr, "days must be 1 to %d", RT_HSIM_MAX_DAYS);
        return RT_EINVAL;
    }
    if (options->tests < RT_HSIM_MIN_TESTS || options->tests > RT_HSIM_MAX_TESTS) {
        rt_set_errstr(errstr, "tests must be %d to %d", RT_HSIM_MIN_TESTS, RT_HSIM_MAX_TESTS);
        return RT_EINVAL;
    }
    if (options->until <= (long long)options->days * DAY) {
        rt_set_errstr(errstr, "the history must start after 1970");
        return RT_EINVAL;
    }
    if (!(options->noise >= 0 && options->noise <= 0.05)) {
        rt_set_errstr(errstr, "noise must be 0 to 0.05");
        return RT_EINVAL;
    }
    rt_hsim *s = calloc(1, sizeof *s);
    if (!s) return RT_ENOMEM;
    s->o = *options;
    if (s->o.noise == 0) s->o.noise = NOISE;
    rt_sim_rng_seed(&s->rng, options->seed);
    s->start = options->until - (long long)options->days * DAY;
    s->start -= s->start % DAY; /* from midnight UTC, as the pages' windows start */
    s->gap_start = options->until - (long long)(GAP_DAYS * DAY);
    /* the regression lands on the first autoland push after 14:00 UTC, 6 days before the end */
    long long regression_day = options->until - 6 * DAY;
    s->regression_at = regression_day - regression_day % DAY + 14 * HOUR;
    for (size_t g = 0; g < NGROUPS; g++) s->groups[s->ngroups++] = GROUPS[g];
    if (options->hostile) s->groups[s->ngroups++] = HOSTILE_GROUP;
    int rc = make_tests(s);
    if (rc == RT_OK) rc = draw_pushes(s);
    if (rc != RT_OK) {
        rt_hsim_free(s);
        return rc;
    }
    *out = s;
    return RT_OK;
}

/* The chance that test t fails in a run of push p on platform k at time at. */
static double failure_rate(const rt_hsim *s, const test_info *t, const push *p, int k, long long at)
{
    const plant *pl = t->plant;
    if (!pl) return s->o.noise;
    if (!strcmp(pl->kind, "regression")) return p->regression ? pl->rate : 0;
    if (pl->platform >= 0 && pl->platform != k) return s->o.noise;
    if (t->since && at < t->since) return 0;
    if (t->until && at > t->until) return 0;
    return pl->rate;
}

/* The failure a test reports: its plant's, else one of the background failures. */
static void failure_of(const test_info *t, size_t index, const char **status, const char **subtest,
                       const char **message)
{
    if (t->plant) {
        *status = t->plant->status;
        *subtest = t->plant->subtest;
        *message = t->plant->message;
        return;
    }
    const char *const *f = BACKGROUND_FAILURES[index % NBACKGROUND];
    *status = f[0];
    *subtest = f[1];
    *message = f[2];
}

void rt_hsim_run_free(rt_hsim_run *run)
{
    if (run) rt_history_rows_free(&run->rows);
}

/* Advances to the next (push, platform, chunk) that runs; false after the last. */
static bool advance(rt_hsim *s)
{
    while (s->push_at < s->npushes) {
        const push *p = &s->pushes[s->push_at];
        while (s->platform_at < NPLATFORMS) {
            if (p->platforms & (1u << s->platform_at)) {
                while (s->chunk_at < NCHUNKS) {
                    if (p->chunks & (1u << s->chunk_at)) return true;
                    s->chunk_at++;
                }
            }
            s->platform_at++;
            s->chunk_at = 0;
        }
        s->push_at++;
        s->platform_at = 0;
        s->chunk_at = 0;
    }
    return false;
}

int rt_hsim_next(rt_hsim *s, rt_hsim_run *run)
{
    rt_hsim_run_free(run);
    memset(run, 0, sizeof *run);
    for (;;) {
        if (!advance(s)) return RT_ENOTFOUND;
        const push *p = &s->pushes[s->push_at];
        int k = (int)s->platform_at, chunk = (int)s->chunk_at++;
        long long at = p->at + 25 * 60 + chunk * 180 + (long long)below(&s->rng, 2400);
        char task_id[23];
        slugid(&s->rng, task_id);
        if (at < s->start || at >= s->o.until ||
            (at >= s->gap_start && at < s->gap_start + GAP_SECONDS))
            continue;
        snprintf(run->run_key, sizeof run->run_key, "%s/0", task_id);
        snprintf(run->project, sizeof run->project, "%s", PROJECTS[p->project]);
        snprintf(run->push, sizeof run->push, "%lld", p->id);
        /* a try push's author: one of TRY_AUTHORS developers, from the push id (no draw
         * from the stream, so the runs are those of a history without authors) */
        char author[48];
        snprintf(author, sizeof author, "dev%02llu@example.com",
                 (unsigned long long)p->id * 2654435761ull % TRY_AUTHORS);
        rt_history_branch_key(run->project, run->push, author, run->branch_key,
                              sizeof run->branch_key);
        snprintf(run->revision, sizeof run->revision, "%s", p->revision);
        snprintf(run->platform, sizeof run->platform, "%s", PLATFORMS[k]);
        snprintf(run->label, sizeof run->label, "test-%s/opt-mochitest-browser-chrome-%d",
                 PLATFORMS[k], chunk + 1);
        iso_time(at, run->run_at);
        run->main = p->project == AUTOLAND || p->project == CENTRAL;
        for (size_t g = (size_t)chunk; g < s->ngroups; g += NCHUNKS) {
            size_t failing[16], nfailing = 0;
            for (size_t i = s->group_first[g]; i < s->group_first[g + 1]; i++) {
                const test_info *t = &s->tests[s->group_tests[i]];
                if (rt_sim_rng_uniform(&s->rng) < failure_rate(s, t, p, k, at) && nfailing < 16)
                    failing[nfailing++] = s->group_tests[i];
            }
            long duration = 20000 + (long)below(&s->rng, 280000);
            if (rt_history_rows_add_group(&run->rows, s->groups[g], nfailing ? "ERROR" : "OK",
                                          duration, nfailing > 0) != RT_OK)
                return RT_ENOMEM;
            for (size_t f = 0; f < nfailing; f++) {
                const char *status, *subtest, *message;
                failure_of(&s->tests[failing[f]], failing[f], &status, &subtest, &message);
                if (rt_history_rows_add_test(&run->rows, s->tests[failing[f]].name, s->groups[g],
                                             status, "PASS", true, subtest, message) != RT_OK)
                    return RT_ENOMEM;
            }
        }
        return RT_OK;
    }
}

const rt_hsim_planted *rt_hsim_planted_list(const rt_hsim *sim, size_t *count)
{
    *count = sim->nplanted;
    return sim->planted;
}

rt_history_run rt_hsim_history_run(const rt_hsim_run *run, const char *repository)
{
    return (rt_history_run){.source = "taskcluster",
                            .run_key = run->run_key,
                            .repository = repository,
                            .project = run->project,
                            .branch = run->project,
                            .main = run->main,
                            .branch_key = run->branch_key,
                            .pr = 0,
                            .push = run->push,
                            .revision = run->revision,
                            .platform = run->platform,
                            .label = run->label,
                            .run_at = run->run_at,
                            .complete_results = false};
}

void rt_hsim_free(rt_hsim *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->ntests; i++) free(s->tests[i].name);
    free(s->tests);
    free(s->group_tests);
    free(s->pushes);
    free(s->planted);
    free(s);
}
