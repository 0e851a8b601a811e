/* SPDX-License-Identifier: MPL-2.0 */
/* test_perf_pick.c - which Perfherder alerts retrig-perf backfills, on the recorded alert
 * summaries (perfherder/alert_summaries.json, alert_summary_with_different_status.json)
 * and on summaries made from them: regressions first, family order, magnitude, rounds per
 * summary, budgets partly used, improvements, small magnitudes, young summaries, triaged
 * and handled alerts, and the parsing of Perfherder's pages; and properties (limits, a
 * reason for every skip) over thousands of summaries generated from a seeded PRNG. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/perf_pick.h"
#include "common/policy.h"

/* 2023-06-24T11:16:45Z: a day after the newest fixture summary (38857) was created. */
#define NOW_2023 ((time_t)1687605405)

typedef struct fixture {
    rt_config cfg;
    rt_perf_options opts;
    rt_perf_summaries summaries;
    rt_perf_result result;
} fixture;

static void load(rt_perf_summaries *s, const char *name)
{
    size_t len;
    char *text = rt_test_read_file(rt_test_fixture(name), &len);
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_perf_summaries_parse(text, len, s, NULL, errstr);
    free(text);
    if (rc != RT_OK) fail_msg("%s: %s", name, errstr);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char errstr[RT_ERRSTR_SIZE] = "";
    if (!f || rt_config_defaults(&f->cfg, errstr) != RT_OK) return -1;
    if (rt_perf_options_from_config(&f->opts, &f->cfg, errstr) != RT_OK) return -1;
    load(&f->summaries, "perfherder/alert_summaries.json");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rt_perf_result_free(&f->result);
    rt_perf_summaries_free(&f->summaries);
    rt_config_free(&f->cfg);
    free(f);
    return 0;
}

static rt_perf_summary *summary(fixture *f, long long id)
{
    for (size_t i = 0; i < f->summaries.count; i++)
        if (f->summaries.items[i].id == id) return &f->summaries.items[i];
    fail_msg("no summary %lld", id);
    return NULL;
}

static rt_perf_alert *alert(fixture *f, long long id)
{
    for (size_t i = 0; i < f->summaries.count; i++)
        for (size_t k = 0; k < f->summaries.items[i].nalerts; k++)
            if (f->summaries.items[i].alerts[k].id == id) return &f->summaries.items[i].alerts[k];
    fail_msg("no alert %lld", id);
    return NULL;
}

static void pick(fixture *f, const rt_perf_history *h, time_t now)
{
    rt_perf_result_free(&f->result);
    assert_int_equal(rt_perf_pick_alerts(&f->summaries, &f->opts, h, now, &f->result), RT_OK);
}

/* The picked alert ids, in order, as "a,b,c". */
static const char *picked(const fixture *f)
{
    static char out[512];
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < f->result.npicks; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%s%lld", i ? "," : "",
                              f->result.picks[i].alert->id);
    return out;
}

/* Why an alert (or, with alert_id 0, a summary) was not picked. */
static const char *skip_reason(const fixture *f, long long summary_id, long long alert_id)
{
    for (size_t i = 0; i < f->result.nskips; i++) {
        const rt_perf_skip *k = &f->result.skips[i];
        if (k->summary->id == summary_id &&
            (alert_id ? k->alert && k->alert->id == alert_id : !k->alert))
            return k->reason;
    }
    return "";
}

/* The covered alerts as "alert<by,...", by 0 for an earlier run's backfill. */
static const char *covered(const fixture *f)
{
    static char out[512];
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < f->result.ncovered; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%s%lld<%lld", i ? "," : "",
                              f->result.covered[i].alert->id, f->result.covered[i].by_alert_id);
    return out;
}

/* Moves an alert to another machine, and so to another job. */
static void set_platform(fixture *f, long long id, const char *platform)
{
    rt_perf_alert *a = alert(f, id);
    char rest[512];
    snprintf(rest, sizeof rest, "%s", strchr(a->job_key, '|'));
    snprintf(a->platform, sizeof a->platform, "%s", platform);
    snprintf(a->job_key, sizeof a->job_key, "%s%s", platform, rest);
}

static bool closed(const fixture *f, long long summary_id)
{
    for (size_t i = 0; i < f->result.nclosed; i++)
        if (f->result.closed[i]->id == summary_id) return true;
    for (size_t i = 0; i < f->result.npicks; i++)
        if (f->result.picks[i].summary->id == summary_id && f->result.picks[i].closes_summary)
            return true;
    return false;
}

static void test_fixture_summaries_parse_with_every_field_the_picking_needs(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->summaries.count, 3);
    rt_perf_summary *s = summary(f, 38857);
    assert_string_equal(s->repository, "autoland");
    assert_int_equal(s->framework, 13);
    assert_int_equal(s->push_id, 1260291);
    assert_string_equal(s->revision, "ed3672832487424625691069c34d5cd1c4800783");
    assert_int_equal((long long)s->created, 1687519005LL); /* 2023-06-23T11:16:45.819043 UTC */
    assert_int_equal(s->nalerts, 3);
    rt_perf_alert *a = alert(f, 177727);
    assert_true(a->is_regression);
    assert_int_equal(a->status, 0);
    assert_int_equal(a->signature_id, 3777240);
    assert_string_equal(a->platform, "linux1804-64-shippable-qr");
    assert_string_equal(a->signature_hash, "a8b7d746763f7da0a98c9b8bb97f6e23c8815655");
    assert_true(a->amount_pct > 17.89 && a->amount_pct < 17.91);
    assert_int_equal(alert(f, 69530)->status, 3);
}

static void test_a_page_gives_its_next_url_and_a_summary_is_never_added_twice(void **state)
{
    (void)state;
    size_t len;
    char *list = rt_test_read_file(rt_test_fixture("perfherder/alert_summaries.json"), &len);
    size_t size = len + 256;
    char *page = malloc(size);
    assert_non_null(page);
    snprintf(page, size,
             "{\"count\": 13, \"next\": \"https://treeherder.example/api/performance/"
             "alertsummary/?page=2\", \"previous\": null, \"results\": %s}",
             list);
    rt_perf_summaries s = {0};
    char *next = NULL, errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_perf_summaries_parse(page, strlen(page), &s, &next, errstr), RT_OK);
    assert_int_equal(s.count, 3);
    assert_non_null(next);
    assert_string_equal(next, "https://treeherder.example/api/performance/alertsummary/?page=2");
    free(next);
    /* A page that moved: the same summaries again add nothing. */
    assert_int_equal(rt_perf_summaries_parse(list, len, &s, &next, errstr), RT_OK);
    assert_null(next);
    assert_int_equal(s.count, 3);
    /* The different-status fixture is summary 20174 again. */
    load(&s, "perfherder/alert_summary_with_different_status.json");
    assert_int_equal(s.count, 3);
    rt_perf_summaries_free(&s);
    free(page);
    free(list);
}

/* A page that is not JSON is refused whole; a malformed summary or alert is left out,
 * named in problems, and the rest of the page is kept (issue 17, item 9). */
static void test_malformed_summaries_and_alerts_are_left_out_and_named(void **state)
{
    (void)state;
    rt_perf_summaries s = {0};
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t len;
    char *text = rt_test_read_file(
        rt_test_fixture("perfherder/alert_summary_with_different_status.json"), &len);
    /* Truncated, as a dropped connection leaves it. */
    assert_int_equal(rt_perf_summaries_parse(text, len / 2, &s, NULL, errstr), RT_EPROTO);
    assert_int_equal(s.count, 0);
    /* An alert without its platform: that alert only. */
    char *at = strstr(text, "\"machine_platform\"");
    assert_non_null(at);
    memcpy(at, "\"machine_platfore\"", 18);
    assert_int_equal(rt_perf_summaries_parse(text, len, &s, NULL, errstr), RT_OK);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.items[0].id, 20174);
    assert_int_equal(s.items[0].nalerts, 3);
    assert_int_equal(s.nproblems, 1);
    assert_int_equal(s.problems[0].summary_id, 20174);
    assert_int_equal(s.problems[0].alert_id, 69344);
    assert_non_null(strstr(s.problems[0].reason, "machine_platform"));
    free(text);
    /* A summary without a usable creation time, beside a good one: the good one is kept. */
    const char *bad_time =
        "[{\"id\": 1, \"push_id\": 2, \"framework\": 1, \"repository\": \"autoland\","
        " \"created\": \"yesterday\", \"alerts\": []},"
        " {\"id\": 3, \"push_id\": 4, \"framework\": 1, \"repository\": \"autoland\","
        " \"created\": \"2023-06-23T11:16:45\", \"alerts\": []}]";
    assert_int_equal(rt_perf_summaries_parse(bad_time, strlen(bad_time), &s, NULL, errstr), RT_OK);
    assert_int_equal(s.count, 2);
    assert_int_equal(s.items[1].id, 3);
    assert_int_equal(s.nproblems, 2);
    assert_int_equal(s.problems[1].summary_id, 1);
    assert_int_equal(s.problems[1].alert_id, 0);
    assert_non_null(strstr(s.problems[1].reason, "created"));
    rt_perf_summaries_free(&s);
    /* Integers an int cannot hold are refused, not wrapped (4294967309 is not framework 13):
     * the summary is left out, with the reason. */
    const char *wrapping =
        "[{\"id\": 1, \"push_id\": 2, \"framework\": 4294967309, \"repository\": \"autoland\","
        " \"created\": \"2023-06-24T10:00:00\", \"alerts\": []}]";
    assert_int_equal(rt_perf_summaries_parse(wrapping, strlen(wrapping), &s, NULL, errstr), RT_OK);
    assert_int_equal(s.count, 0);
    assert_int_equal(s.nproblems, 1);
    assert_non_null(strstr(s.problems[0].reason, "framework"));
    rt_perf_summaries_free(&s);
}

/* The same summary twice, on one page or on two, is one summary whose alerts are the union
 * (the later copy's values winning): nothing is counted or picked twice (item 8). */
static void test_duplicate_summaries_are_merged(void **state)
{
    (void)state;
    rt_perf_summaries s = {0};
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t len;
    char *text = rt_test_read_file(rt_test_fixture("perfherder/alert_summaries.json"), &len);
    assert_int_equal(rt_perf_summaries_parse(text, len, &s, NULL, errstr), RT_OK);
    free(text);
    /* The second fixture is summary 20174 again, its alerts since triaged (3, 4). */
    text = rt_test_read_file(rt_test_fixture("perfherder/alert_summary_with_different_status.json"),
                             &len);
    assert_int_equal(rt_perf_summaries_parse(text, len, &s, NULL, errstr), RT_OK);
    free(text);
    assert_int_equal(s.count, 3);
    size_t found = 0;
    for (size_t i = 0; i < s.count; i++) {
        if (s.items[i].id != 20174) continue;
        found++;
        assert_int_equal(s.items[i].nalerts, 4);
        for (size_t k = 0; k < 4; k++)
            if (s.items[i].alerts[k].id == 69347) assert_int_equal(s.items[i].alerts[k].status, 4);
    }
    assert_int_equal(found, 1);
    /* Twice in one page. */
    rt_perf_summaries_free(&s);
    const char *twice =
        "[{\"id\": 7, \"push_id\": 2, \"framework\": 1, \"repository\": \"autoland\","
        " \"created\": \"2023-06-23T11:16:45\", \"alerts\": []},"
        " {\"id\": 7, \"push_id\": 2, \"framework\": 1, \"repository\": \"autoland\","
        " \"created\": \"2023-06-23T11:16:45\", \"alerts\": []}]";
    assert_int_equal(rt_perf_summaries_parse(twice, strlen(twice), &s, NULL, errstr), RT_OK);
    assert_int_equal(s.count, 1);
    rt_perf_summaries_free(&s);
}

static void test_default_options_are_the_issue_families_and_daily_limits(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->opts.nfamilies, 5);
    const char *names[] = {"windows10", "windows7", "linux", "osx", "android", "other"};
    for (size_t i = 0; i < 6; i++) assert_string_equal(rt_perf_family_name(&f->opts, i), names[i]);
    assert_int_equal(f->opts.limit[0], 600);
    assert_int_equal(f->opts.limit[4], 100);
    assert_int_equal(f->opts.limit[5], 600);
    assert_int_equal(f->opts.cost, 9); /* depth 9 x times 1 */
    assert_int_equal(rt_perf_family_of(&f->opts, "macosx1100-64-shippable-qr"), 3);
    assert_int_equal(rt_perf_family_of(&f->opts, "osx-1015"), 3);
    assert_int_equal(rt_perf_family_of(&f->opts, "windows7-32-shippable-qr"), 1);
    /* Windows 11 machines run in the windows10 family's place (item 11). */
    assert_int_equal(rt_perf_family_of(&f->opts, "windows11-64-2009-qr"), 0);
    assert_int_equal(rt_perf_family_of(&f->opts, "android-hw-a51-11-0-aarch64"), 4);
    assert_int_equal(rt_perf_family_of(&f->opts, "freebsd-64"), 5);

    rt_perf_options o;
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_set(&f->cfg, "perf_platform_families",
                                   "win=windows10/windows11, mac=", "test", errstr),
                     RT_OK);
    assert_int_equal(rt_perf_options_from_config(&o, &f->cfg, errstr), RT_ECONFIG);
    assert_non_null(strstr(errstr, "perf_platform_families"));
    /* Empty, or without one of the five families, is a configuration error, not "every
     * alert is other". */
    assert_int_equal(rt_config_set(&f->cfg, "perf_platform_families", "", "test", errstr), RT_OK);
    assert_int_equal(rt_perf_options_from_config(&o, &f->cfg, errstr), RT_ECONFIG);
    assert_non_null(strstr(errstr, "empty"));
    assert_int_equal(
        rt_config_set(&f->cfg, "perf_platform_families", "win=windows10/windows11", "test", errstr),
        RT_OK);
    assert_int_equal(rt_perf_options_from_config(&o, &f->cfg, errstr), RT_ECONFIG);
    assert_non_null(strstr(errstr, "no family named windows10"));
    assert_int_equal(rt_config_set(&f->cfg, "perf_platform_families",
                                   "windows10=windows10/windows11, windows7=windows7, linux=linux, "
                                   "osx=macosx/osx, android=android, bsd=freebsd",
                                   "test", errstr),
                     RT_OK);
    assert_int_equal(
        rt_config_set(&f->cfg, "perf_budget_limits", "windows10=50, many", "test", errstr), RT_OK);
    assert_int_equal(rt_perf_options_from_config(&o, &f->cfg, errstr), RT_ECONFIG);
    assert_non_null(strstr(errstr, "perf_budget_limits"));
    assert_int_equal(rt_config_set(&f->cfg, "perf_budget_limits", "windows10=50", "test", errstr),
                     RT_OK);
    assert_int_equal(rt_perf_options_from_config(&o, &f->cfg, errstr), RT_OK);
    assert_int_equal(rt_perf_family_of(&o, "windows11-64-2009-qr"), 0);
    assert_int_equal(rt_perf_family_of(&o, "freebsd-64"), 5);
    assert_int_equal(o.limit[0], 50);
    assert_int_equal(o.limit[6], 0); /* "other": no pattern, no budget */
}

static void test_by_default_only_the_large_untriaged_regression_is_picked(void **state)
{
    fixture *f = *state;
    pick(f, NULL, NOW_2023);
    assert_string_equal(picked(f), "177727");
    const rt_perf_pick *p = &f->result.picks[0];
    assert_int_equal(p->family, 2);
    assert_int_equal(p->round, 1);
    assert_non_null(strstr(p->reason, "regression, family linux"));
    assert_string_equal(skip_reason(f, 38857, 177724), "improvement (include_improvements is off)");
    assert_string_equal(skip_reason(f, 20239, 0), "framework 2 is not configured");
    assert_string_equal(skip_reason(f, 20174, 69345), "improvement (include_improvements is off)");
    /* Nothing else in 38857 and 20174 is worth a backfill: both are done. */
    assert_true(closed(f, 38857));
    assert_true(closed(f, 20174));
    assert_int_equal(f->result.used[2], 9);
}

static void
test_regressions_first_then_family_order_then_magnitude_with_rounds_per_summary(void **state)
{
    fixture *f = *state;
    f->opts.include_improvements = true;
    pick(f, NULL, NOW_2023);
    /* The regression, then the improvements' round 1: windows10 (69345, a windows11
     * machine) before osx (69346, the tie with 69347 by id). 177724 is the regression's
     * job (linux imgur: the same suite on the same machine) and 69347 is 69346's job: both
     * are covered, not backfilled again. */
    assert_string_equal(picked(f), "177727,69345,69346");
    assert_int_equal(f->result.picks[1].round, 1);
    assert_int_equal(f->result.picks[2].round, 1);
    assert_string_equal(covered(f), "177724<177727,69347<69346");
    assert_true(strstr(skip_reason(f, 38857, 177726), "too small (4.06% < 5.00%)") != NULL);
    assert_true(strstr(skip_reason(f, 20174, 69344), "too small") != NULL);
    /* 20174 has nothing more worth a backfill: its last pick closes it. */
    assert_true(f->result.picks[2].closes_summary);
    assert_false(f->result.picks[1].closes_summary);
}

static void test_a_summary_gives_at_most_max_per_summary_alerts(void **state)
{
    fixture *f = *state;
    f->opts.include_improvements = true;
    f->opts.max_per_summary = 2;
    pick(f, NULL, NOW_2023);
    /* Two jobs of 20174; the third alert (69347) is 69346's job: covered, not over the cap. */
    assert_string_equal(picked(f), "177727,69345,69346");
    assert_string_equal(skip_reason(f, 20174, 69347), "");
    assert_true(closed(f, 20174));
    f->opts.max_per_summary = 1;
    pick(f, NULL, NOW_2023);
    assert_string_equal(picked(f), "177727,69345");
    assert_non_null(strstr(skip_reason(f, 20174, 69346), "max_per_summary"));
    assert_non_null(strstr(skip_reason(f, 20174, 69347), "max_per_summary"));
    assert_true(closed(f, 20174));
}

static void test_mixed_platforms_follow_the_configured_family_order(void **state)
{
    fixture *f = *state;
    f->opts.include_improvements = true;
    /* Summary 20174 made mixed: windows10, windows7, android, osx (four jobs). */
    set_platform(f, 69344, "android-hw-p2-8-0-android-aarch64-shippable-qr");
    alert(f, 69344)->amount_pct = 30;
    set_platform(f, 69345, "windows7-32-shippable-qr");
    set_platform(f, 69347, "windows10-64-shippable-qr");
    alert(f, 69347)->amount_pct = 5.5;
    pick(f, NULL, NOW_2023);
    /* windows10 beats windows7 beats osx beats android, whatever the magnitude. */
    assert_string_equal(picked(f), "177727,69347,69345,69346");
    assert_non_null(strstr(skip_reason(f, 20174, 69344), "max_per_summary"));
    /* A reversed order turns it around. */
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_set(&f->cfg, "perf_platform_families",
                                   "android=android, osx=macosx/osx, windows7=windows7, "
                                   "windows10=windows10/windows11, linux=linux",
                                   "test", errstr),
                     RT_OK);
    assert_int_equal(rt_perf_options_from_config(&f->opts, &f->cfg, errstr), RT_OK);
    f->opts.include_improvements = true;
    pick(f, NULL, NOW_2023);
    /* linux comes last now, and the regression still comes first. */
    assert_string_equal(picked(f), "177727,69344,69346,69345");
    assert_non_null(strstr(skip_reason(f, 20174, 69347), "max_per_summary"));
}

static void test_a_family_out_of_budget_is_passed_over_and_the_summary_stays_open(void **state)
{
    fixture *f = *state;
    f->opts.include_improvements = true;
    f->opts.used[3] = 595; /* osx: 5 of 600 left, a backfill costs 9 */
    f->opts.limit[2] = 9;  /* linux: room for exactly one backfill */
    pick(f, NULL, NOW_2023);
    assert_string_equal(picked(f), "177727,69345");
    assert_non_null(strstr(skip_reason(f, 20174, 69346), "family osx out of budget (595 of 600"));
    /* 177724 needs no budget of its own: the regression's backfill is its job too. */
    assert_string_equal(covered(f), "177724<177727");
    /* 20174 keeps alerts a later day's budget can pay for; 38857 has nothing left. */
    assert_false(closed(f, 20174));
    assert_true(closed(f, 38857));
    assert_int_equal(f->result.used[2], 9);
    assert_int_equal(f->result.used[0], 9);
    /* Linux full and the improvement of another linux job: passed over for budget. */
    set_platform(f, 177724, "linux1804-64-qr");
    pick(f, NULL, NOW_2023);
    assert_non_null(strstr(skip_reason(f, 38857, 177724), "family linux out of budget (9 of 9"));
    assert_false(closed(f, 38857));
}

/* Every regression of a summary comes before any of its improvements, whatever the family
 * rounds (item 10). */
static void test_regressions_take_the_cap_before_any_improvement(void **state)
{
    fixture *f = *state;
    f->opts.include_improvements = true;
    f->opts.max_per_summary = 2;
    /* 20174: two linux regressions (two jobs) and a large windows improvement. */
    set_platform(f, 69345, "linux1804-64-shippable-qr");
    alert(f, 69345)->is_regression = true;
    set_platform(f, 69346, "linux1804-64-shippable-qr");
    alert(f, 69346)->is_regression = true;
    set_platform(f, 69347, "windows10-64-shippable-qr");
    alert(f, 69347)->amount_pct = 40;
    pick(f, NULL, NOW_2023);
    /* Rounds by family would take a linux regression and the windows improvement; the
     * regressions' second round comes first. */
    assert_string_equal(picked(f), "177727,69345,69346");
    assert_non_null(strstr(skip_reason(f, 20174, 69347), "max_per_summary"));
}

/* An alert whose job an earlier run backfilled is covered: no second backfill (item 7). */
static void test_a_job_backfilled_by_an_earlier_run_covers_its_siblings(void **state)
{
    fixture *f = *state;
    f->opts.include_improvements = true;
    const long long handled[] = {69346};
    rt_perf_taken taken[] = {{20174, 1, false}};
    rt_perf_job jobs[] = {{20174, alert(f, 69346)->job_key}};
    rt_perf_history h = {handled, 1, taken, 1, jobs, 1};
    pick(f, &h, NOW_2023);
    assert_string_equal(picked(f), "177727,69345");
    assert_string_equal(covered(f), "69347<0,177724<177727");
}

static void test_a_young_summary_waits_until_min_age_has_passed(void **state)
{
    fixture *f = *state;
    time_t created = summary(f, 38857)->created;
    pick(f, NULL, created + 10 * 60);
    assert_string_equal(picked(f), "");
    assert_non_null(
        strstr(skip_reason(f, 38857, 0), "too young (created 10 min ago, min_age 60 min)"));
    assert_false(closed(f, 38857));
    pick(f, NULL, created + 60 * 60);
    assert_string_equal(picked(f), "177727");
}

static void test_triaged_alerts_are_never_candidates(void **state)
{
    fixture *f = *state;
    rt_perf_summaries_free(&f->summaries);
    load(&f->summaries, "perfherder/alert_summary_with_different_status.json");
    f->opts.include_improvements = true;
    pick(f, NULL, NOW_2023);
    assert_string_equal(picked(f), "69345");
    assert_string_equal(skip_reason(f, 20174, 69346), "triaged (status 3)");
    assert_string_equal(skip_reason(f, 20174, 69347), "triaged (status 4)");
    assert_non_null(strstr(skip_reason(f, 20174, 69344), "too small"));
    assert_true(closed(f, 20174));
}

static void test_configured_repositories_only(void **state)
{
    fixture *f = *state;
    snprintf(summary(f, 38857)->repository, 64, "try");
    pick(f, NULL, NOW_2023);
    assert_string_equal(picked(f), "");
    assert_string_equal(skip_reason(f, 38857, 0), "repository try is not configured");
}

static void test_history_keeps_handled_alerts_and_summaries_out(void **state)
{
    fixture *f = *state;
    f->opts.include_improvements = true;
    const long long handled[] = {177727, 69346};
    rt_perf_taken taken[] = {{20174, 2, false}, {20239, 0, true}};
    rt_perf_history h = {handled, 2, taken, 2, NULL, 0};
    f->opts.frameworks = NULL; /* any framework: 20239 is out because it is closed */
    pick(f, &h, NOW_2023);
    /* 20174 had given two, so one more: windows10 (69345 on windows11) comes before osx. The
     * history names no jobs here, so 177724 and 69347 are not known to be covered. */
    assert_string_equal(picked(f), "69345,177724");
    assert_string_equal(skip_reason(f, 38857, 177727), "handled before");
    assert_string_equal(skip_reason(f, 20174, 69346), "handled before");
    assert_non_null(strstr(skip_reason(f, 20174, 69347), "max_per_summary"));
    assert_string_equal(skip_reason(f, 20239, 0), "summary handled before");
    assert_true(closed(f, 20174));
}

/* An improvement of a family whose job in its summary a regression already took: the
 * family's next round takes it (issue 30). The improvements' rounds once started at 0 again
 * while the family's count held the regression's pick, so the improvement was never reached
 * and was listed as skipped with an empty reason. */
static void test_an_improvement_of_a_family_a_regression_took_gets_the_next_round(void **state)
{
    fixture *f = *state;
    f->opts.include_improvements = true;
    /* 38857 alone: the linux regression 177727 and a linux improvement of another job. */
    set_platform(f, 177724, "linux1804-64-qr");
    snprintf(summary(f, 20174)->repository, 64, "try");
    pick(f, NULL, NOW_2023);
    assert_string_equal(picked(f), "177727,177724");
    const rt_perf_pick *p = &f->result.picks[1];
    assert_int_equal(p->family, 2);
    assert_int_equal(p->round, 2);
    assert_non_null(strstr(p->reason, "improvement, family linux"));
    assert_non_null(strstr(p->reason, "round 2"));
    assert_string_equal(skip_reason(f, 38857, 177724), "");
    assert_true(p->closes_summary);
    assert_int_equal(f->result.used[2], 18);
    /* With 20174's improvements in round 1 too. */
    snprintf(summary(f, 20174)->repository, 64, "autoland");
    pick(f, NULL, NOW_2023);
    assert_string_equal(picked(f), "177727,69345,69346,177724");
    assert_int_equal(f->result.picks[3].round, 2);
    /* With the quota used by the regression it is skipped, and says why. */
    f->opts.max_per_summary = 1;
    pick(f, NULL, NOW_2023);
    assert_string_equal(picked(f), "177727,69345");
    assert_non_null(strstr(skip_reason(f, 38857, 177724), "max_per_summary"));
}

/* ---- properties over generated summaries ---------------------------------------------- */

/* splitmix64: a seeded generator, so that a failing case can be replayed from its seed. */
static unsigned long long next_random(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int below(unsigned long long *state, int n)
{
    return (int)(next_random(state) % (unsigned long long)n);
}

/* Every family (and "other"), two machines of some, so that jobs of one family differ. */
static const char *const GEN_PLATFORMS[] = {"windows10-64-shippable-qr",
                                            "windows11-64-2009-shippable-qr",
                                            "windows7-32-shippable-qr",
                                            "linux1804-64-shippable-qr",
                                            "linux1804-64-qr",
                                            "macosx1015-64-shippable-qr",
                                            "android-hw-a51-11-0-aarch64-shippable-qr",
                                            "freebsd-64"};
static const char *const GEN_SUITES[] = {"tp6", "speedometer", "damp"};
static const char *const GEN_REPOSITORIES[] = {"autoland", "mozilla-central", "try"};
static const int GEN_FRAMEWORKS[] = {1, 2, 13};

typedef struct generated {
    rt_perf_summaries summaries;
    long long handled[64];
    rt_perf_taken taken[16];
    rt_perf_job jobs[32];
    rt_perf_history history;
} generated;

/* A handful of summaries of random alerts, and a random history of earlier runs. */
static void generate(unsigned long long *rng, generated *g, time_t now)
{
    memset(g, 0, sizeof *g);
    size_t count = 1 + (size_t)below(rng, 6);
    g->summaries.items = calloc(count, sizeof *g->summaries.items);
    assert_non_null(g->summaries.items);
    long long next_alert = 1000;
    for (size_t i = 0; i < count; i++) {
        rt_perf_summary *s = &g->summaries.items[g->summaries.count++];
        s->id = 100 + (long long)i;
        s->push_id = 5000 + (long long)i;
        s->framework = GEN_FRAMEWORKS[below(rng, 10) < 8 ? 0 : 1 + below(rng, 2)];
        snprintf(s->repository, sizeof s->repository, "%s",
                 GEN_REPOSITORIES[below(rng, 10) < 8 ? below(rng, 2) : 2]);
        s->created = now - 60 * (20 + below(rng, 300));
        size_t n = (size_t)below(rng, 13);
        s->alerts = n ? calloc(n, sizeof *s->alerts) : NULL;
        for (size_t k = 0; k < n; k++) {
            rt_perf_alert *a = &s->alerts[s->nalerts++];
            a->id = next_alert++;
            a->signature_id = a->id * 10;
            a->status = below(rng, 10) < 8 ? 0 : 1 + below(rng, 4);
            a->is_regression = below(rng, 2);
            a->amount_pct = below(rng, 4000) / 100.0;
            snprintf(
                a->platform, sizeof a->platform, "%s",
                GEN_PLATFORMS[below(rng, (int)(sizeof GEN_PLATFORMS / sizeof *GEN_PLATFORMS))]);
            snprintf(a->suite, sizeof a->suite, "%s", GEN_SUITES[below(rng, 3)]);
            snprintf(a->test, sizeof a->test, "subtest-%d", below(rng, 4));
            snprintf(a->job_key, sizeof a->job_key, "%s|%s||", a->platform, a->suite);
        }
        /* Earlier runs: some alerts handled, a summary's taken count, closed, jobs done. */
        for (size_t k = 0; k < s->nalerts; k++) {
            if (below(rng, 10) == 0 && g->history.nhandled_alerts < 64)
                g->handled[g->history.nhandled_alerts++] = s->alerts[k].id;
            if (below(rng, 12) == 0 && g->history.njobs < 32)
                g->jobs[g->history.njobs++] = (rt_perf_job){s->id, s->alerts[k].job_key};
        }
        if (below(rng, 4) == 0 && g->history.nsummaries < 16)
            g->taken[g->history.nsummaries++] =
                (rt_perf_taken){s->id, below(rng, 4), below(rng, 8) == 0};
    }
    g->history.handled_alerts = g->handled;
    g->history.summaries = g->taken;
    g->history.jobs = g->jobs;
}

static bool alert_of(const rt_perf_summary *s, const rt_perf_alert *a)
{
    return a >= s->alerts && a < s->alerts + s->nalerts;
}

/* What the result says of alert a of summary s: picked, covered or skipped, each with its
 * reason; a skipped summary speaks for its alerts. */
static size_t times_listed(const rt_perf_result *r, const rt_perf_summary *s,
                           const rt_perf_alert *a)
{
    size_t n = 0;
    for (size_t i = 0; i < r->npicks; i++) n += r->picks[i].alert == a;
    for (size_t i = 0; i < r->ncovered; i++) n += r->covered[i].alert == a;
    for (size_t i = 0; i < r->nskips; i++)
        n += r->skips[i].summary == s && (r->skips[i].alert == a || !r->skips[i].alert);
    return n;
}

static const rt_perf_skip *skip_of(const rt_perf_result *r, const rt_perf_alert *a)
{
    for (size_t i = 0; i < r->nskips; i++)
        if (r->skips[i].alert == a) return &r->skips[i];
    return NULL;
}

static void check_result(const rt_perf_summaries *sums, const rt_perf_history *h,
                         const rt_perf_options *o, const rt_perf_result *r, unsigned long long seed)
{
#define CHECK(cond, format, ...)                                                                   \
    do {                                                                                           \
        if (!(cond)) fail_msg("seed %llu: " format, seed, __VA_ARGS__);                            \
    } while (0)
    /* Every alert is picked, covered or skipped, once; every one of them says why. */
    for (size_t i = 0; i < sums->count; i++) {
        const rt_perf_summary *s = &sums->items[i];
        for (size_t k = 0; k < s->nalerts; k++)
            CHECK(times_listed(r, s, &s->alerts[k]) == 1, "alert %lld is listed %zu times",
                  s->alerts[k].id, times_listed(r, s, &s->alerts[k]));
    }
    for (size_t i = 0; i < r->nskips; i++)
        CHECK(r->skips[i].reason[0], "summary %lld alert %lld is skipped with no reason",
              r->skips[i].summary->id, r->skips[i].alert ? r->skips[i].alert->id : 0LL);
    for (size_t i = 0; i < r->ncovered; i++)
        CHECK(r->covered[i].reason[0], "alert %lld is covered with no reason",
              r->covered[i].alert->id);
    for (size_t i = 0; i < r->npicks; i++)
        CHECK(r->picks[i].reason[0], "alert %lld is picked with no reason", r->picks[i].alert->id);

    int cost[RT_PERF_MAX_FAMILIES + 1] = {0};
    for (size_t i = 0; i < r->npicks; i++) {
        const rt_perf_pick *p = &r->picks[i];
        const rt_perf_summary *s = p->summary;
        CHECK(alert_of(s, p->alert), "pick %zu is not an alert of its summary", i);
        CHECK(p->family == rt_perf_family_of(o, p->alert->platform), "alert %lld: wrong family",
              p->alert->id);
        CHECK(p->alert->status == 0 && p->alert->amount_pct >= o->min_amount_pct &&
                  (p->alert->is_regression || o->include_improvements),
              "alert %lld is no candidate", p->alert->id);
        cost[p->family] += o->cost;
        /* max_per_summary, counting what earlier runs took. */
        int taken = 0, picks = 0, round = 0;
        for (size_t t = 0; h && t < h->nsummaries; t++)
            if (h->summaries[t].summary_id == s->id) taken = h->summaries[t].taken;
        for (size_t k = 0; k <= i; k++) {
            const rt_perf_pick *q = &r->picks[k];
            if (q->summary != s) continue;
            picks++;
            CHECK(k == i || strcmp(q->alert->job_key, p->alert->job_key),
                  "summary %lld: two picks of one job", s->id);
            if (q->family == p->family) round++;
        }
        CHECK(taken + picks <= o->max_per_summary, "summary %lld gives %d jobs over %d", s->id,
              taken + picks, o->max_per_summary);
        /* Rounds: the summary's 1st, 2nd... job of this family. */
        CHECK(p->round == round, "alert %lld: round %d, the family's job %d of its summary",
              p->alert->id, p->round, round);
        for (size_t j = 0; h && j < h->njobs; j++)
            CHECK(h->jobs[j].summary_id != s->id || strcmp(h->jobs[j].job_key, p->alert->job_key),
                  "alert %lld: its job was backfilled before", p->alert->id);
        /* A regression never loses its place to an improvement: no regression of the
         * summary was passed over for its quota, none of the family for budget. */
        if (p->alert->is_regression) continue;
        for (size_t k = 0; k < s->nalerts; k++) {
            const rt_perf_skip *sk = skip_of(r, &s->alerts[k]);
            CHECK(!s->alerts[k].is_regression || !sk || !strstr(sk->reason, "max_per_summary"),
                  "improvement %lld picked, regression %lld over the quota", p->alert->id,
                  s->alerts[k].id);
        }
        for (size_t k = 0; k < r->nskips; k++) {
            const rt_perf_alert *a = r->skips[k].alert;
            CHECK(!a || !a->is_regression || !strstr(r->skips[k].reason, "out of budget") ||
                      rt_perf_family_of(o, a->platform) != p->family,
                  "improvement %lld picked, regression %lld of its family out of budget",
                  p->alert->id, a ? a->id : 0LL);
        }
    }
    /* Budgets: every pick paid, none past a family's daily limit. */
    for (size_t fam = 0; fam <= o->nfamilies; fam++) {
        CHECK(r->used[fam] == o->used[fam] + cost[fam], "family %zu: used %d, expected %d", fam,
              r->used[fam], o->used[fam] + cost[fam]);
        CHECK(cost[fam] == 0 || r->used[fam] <= o->limit[fam], "family %zu: %d used of %d", fam,
              r->used[fam], o->limit[fam]);
    }
#undef CHECK
}

/* Thousands of generated summaries, options and histories: every skipped alert says why,
 * every alert is accounted for once, and the limits (max_per_summary, budgets, one backfill
 * per job, rounds, regressions first) hold. */
static void test_generated_summaries_keep_every_limit_and_every_skip_has_a_reason(void **state)
{
    fixture *f = *state;
    struct {
        size_t late_improvements, budget, quota, covered;
    } seen = {0};
    for (unsigned long long seed = 1; seed <= 3000; seed++) {
        unsigned long long rng = seed;
        generated g;
        generate(&rng, &g, NOW_2023);
        rt_perf_options o = f->opts;
        o.include_improvements = below(&rng, 4) != 0;
        o.max_per_summary = 1 + below(&rng, 4);
        o.min_amount_pct = below(&rng, 4) * 2.5;
        o.min_age_s = 60 * below(&rng, 90);
        for (size_t fam = 0; fam <= o.nfamilies; fam++) {
            if (below(&rng, 3) == 0) o.limit[fam] = 9 * below(&rng, 5);
            o.used[fam] = below(&rng, 3) == 0 ? below(&rng, o.limit[fam] + 1) : 0;
        }
        const rt_perf_history *h = below(&rng, 3) ? &g.history : NULL;
        rt_perf_result r;
        assert_int_equal(rt_perf_pick_alerts(&g.summaries, &o, h, NOW_2023, &r), RT_OK);
        check_result(&g.summaries, h, &o, &r, seed);
        for (size_t i = 0; i < r.npicks; i++)
            seen.late_improvements += !r.picks[i].alert->is_regression && r.picks[i].round > 1;
        for (size_t i = 0; i < r.nskips; i++) {
            seen.budget += strstr(r.skips[i].reason, "out of budget") != NULL;
            seen.quota += strstr(r.skips[i].reason, "max_per_summary") != NULL;
        }
        seen.covered += r.ncovered;
        rt_perf_result_free(&r);
        rt_perf_summaries_free(&g.summaries);
    }
    /* The generator reaches each rule: improvements in a family's later round, budgets and
     * quotas passing alerts over, jobs covered. */
    assert_true(seen.late_improvements > 0 && seen.budget > 0 && seen.quota > 0 &&
                seen.covered > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_fixture_summaries_parse_with_every_field_the_picking_needs, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_page_gives_its_next_url_and_a_summary_is_never_added_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_summaries_and_alerts_are_left_out_and_named,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_summaries_are_merged, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_default_options_are_the_issue_families_and_daily_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_by_default_only_the_large_untriaged_regression_is_picked, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_regressions_first_then_family_order_then_magnitude_with_rounds_per_summary, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_a_summary_gives_at_most_max_per_summary_alerts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_mixed_platforms_follow_the_configured_family_order,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_family_out_of_budget_is_passed_over_and_the_summary_stays_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_young_summary_waits_until_min_age_has_passed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_triaged_alerts_are_never_candidates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_configured_repositories_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_keeps_handled_alerts_and_summaries_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_regressions_take_the_cap_before_any_improvement, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_job_backfilled_by_an_earlier_run_covers_its_siblings,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_an_improvement_of_a_family_a_regression_took_gets_the_next_round, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_generated_summaries_keep_every_limit_and_every_skip_has_a_reason, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
