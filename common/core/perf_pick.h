/* SPDX-License-Identifier: MPL-2.0 */
/* perf_pick.h - which Perfherder alerts retrig-perf backfills: parsing alert summaries
 * and the pure picking rules, shared by the worker and `retrig perf-pick`.
 *
 * Candidates: summaries of a configured repository and framework, created at least
 * min_age ago (Perfherder times are UTC) and not handled before; their alerts untriaged
 * (status 0), not handled before, regressions only unless include_improvements, with
 * amount_pct >= min_amount_pct. Priority: regression before improvement, then platform
 * family (configured order; a family is a list of machine_platform prefixes ("osx=macosx/osx"); a
 * platform no family claims belongs to "other", after every family), then magnitude, then alert id.
 * Each summary gives at most max_per_summary backfills, taken round by round: one per platform
 * family per round, in priority order, while its quota lasts; every regression's rounds come
 * before any improvement's, so an improvement never takes a place a regression could have; a
 * family's count goes on from the regressions to the improvements (an improvement of a family
 * a regression of its summary gave a job takes the family's next round). Every alert not picked
 * or covered is skipped with its reason.
 * The quota counts jobs, not alerts: alerts of one summary from the same job (its job_key: the
 * same platform, suite, options and extra options, the subtests of one suite run in one job)
 * are one backfill, so the first is picked and its siblings are `covered` by it, as is an
 * alert whose job an earlier run backfilled. A backfill costs `cost` jobs from its
 * family's daily budget; a family whose budget cannot pay is passed over and the next alert (of
 * another family) is taken. A summary is done ("closed") once its quota is used or nothing is left
 * in it that a later run could take; one whose alerts were passed over for budget stays open. Pure:
 * no I/O, no clock (now is given), no globals. Untrusted JSON is parsed once, here, into bounded
 * structs. */
#ifndef RETRIG_COMMON_PERF_PICK_H
#define RETRIG_COMMON_PERF_PICK_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/core/errors.h"
#include "common/core/strlist.h"

#define RT_PERF_MAX_FAMILIES  16 /* configured families; index nfamilies is "other" */
#define RT_PERF_MAX_PREFIXES  8
#define RT_PERF_MAX_SUMMARIES 10000 /* per parse */
#define RT_PERF_MAX_ALERTS    2000  /* per summary */
#define RT_PERF_REASON_SIZE   192

typedef struct rt_perf_alert {
    long long id;
    long long signature_id;
    char signature_hash[48];
    int status; /* 0 untriaged */
    bool is_regression;
    double amount_pct;
    char platform[128]; /* series_signature.machine_platform */
    char suite[128];
    char test[128];
    /* The job its data comes from within its summary's push: platform, suite,
     * option_collection_hash and extra_options, joined by '|'. */
    char job_key[512];
} rt_perf_alert;

typedef struct rt_perf_summary {
    long long id;
    long long push_id;
    int framework;
    char repository[64];
    char revision[48];
    time_t created; /* UTC */
    rt_perf_alert *alerts;
    size_t nalerts;
} rt_perf_summary;

/* A summary or an alert that the parse left out, and why. */
typedef struct rt_perf_problem {
    long long summary_id; /* 0 when the summary has no usable id */
    long long alert_id;   /* 0: the whole summary */
    char reason[RT_PERF_REASON_SIZE];
} rt_perf_problem;

typedef struct rt_perf_summaries {
    rt_perf_summary *items;
    size_t count;
    rt_perf_problem *problems; /* what was left out, in page order */
    size_t nproblems;
} rt_perf_summaries;

/* Parses Perfherder's answer and appends its summaries to out: a page
 * {"count", "next", "results": [...]}, a list of summaries, or one summary. *next (may be
 * NULL) receives the page's "next" URL, malloc'd, or NULL on the last page. A summary seen
 * twice (in one page, or on two pages, which move while being read) is merged: its alerts
 * are the union by alert id, the later copy's values winning. A summary or an alert that
 * lacks a field the picking needs (or is over the bounds above) is left out and listed in
 * out->problems with the reason; the rest of the page is kept. RT_EPROTO (errstr) only when
 * the document is not a page, a list or a summary; RT_ETOOBIG past RT_PERF_MAX_SUMMARIES;
 * RT_ENOMEM. On failure out keeps what it had. */
RT_MUSTCHECK int rt_perf_summaries_parse(const char *text, size_t len, rt_perf_summaries *out,
                                         char **next, char *errstr);
void rt_perf_summaries_free(rt_perf_summaries *summaries);

typedef struct rt_perf_family {
    char name[32];
    char prefixes[RT_PERF_MAX_PREFIXES][64];
    size_t nprefixes;
} rt_perf_family;

typedef struct rt_perf_options {
    rt_perf_family families[RT_PERF_MAX_FAMILIES]; /* priority order */
    size_t nfamilies;
    int limit[RT_PERF_MAX_FAMILIES + 1]; /* daily budget in jobs; [nfamilies] is "other" */
    int used[RT_PERF_MAX_FAMILIES + 1];  /* spent today already */
    int cost;                            /* jobs one backfill schedules */
    int max_per_summary;
    double min_amount_pct;
    long min_age_s;
    bool include_improvements;
    const rt_strlist *repositories; /* NULL or empty: any */
    const rt_strlist *frameworks;   /* ids as text; NULL or empty: any */
} rt_perf_options;

/* The perf_* settings the options are built from (common/policy.h fills them from the
 * configuration); the lists are borrowed and must outlive the options. */
typedef struct rt_perf_settings {
    const rt_strlist *platform_families; /* "NAME=PREFIX/PREFIX", in priority order */
    const rt_strlist *budget_limits;     /* "PATTERN=LIMIT" on family names */
    const rt_strlist *repositories;
    const rt_strlist *frameworks;
    int backfill_depth, backfill_times;
    int max_per_summary;
    double min_amount_pct;
    int min_age_minutes;
    bool include_improvements;
} rt_perf_settings;

/* Builds options from the settings (used all 0). RT_ECONFIG with errstr naming the key for
 * a bad family ("NAME=PREFIX/PREFIX") or limit ("PATTERN=LIMIT", matched on family names;
 * a family no pattern matches has no budget). repositories/frameworks point into settings'
 * lists. */
RT_MUSTCHECK int rt_perf_options_build(rt_perf_options *options, const rt_perf_settings *settings,
                                       char *errstr);
/* The family index of a machine platform (nfamilies for "other"). */
size_t rt_perf_family_of(const rt_perf_options *options, const char *platform);
/* The family's name ("other" for nfamilies). */
const char *rt_perf_family_name(const rt_perf_options *options, size_t family);

/* What earlier runs did (from Postgres). */
typedef struct rt_perf_taken {
    long long summary_id;
    int taken;   /* alerts of the summary already backfilled (or found backfilled) */
    bool closed; /* the summary is done */
} rt_perf_taken;

/* A job an earlier run backfilled for a summary. */
typedef struct rt_perf_job {
    long long summary_id;
    const char *job_key;
} rt_perf_job;

typedef struct rt_perf_history {
    const long long *handled_alerts; /* alerts with a record, whatever its outcome */
    size_t nhandled_alerts;
    const rt_perf_taken *summaries; /* taken: distinct jobs backfilled */
    size_t nsummaries;
    const rt_perf_job *jobs; /* jobs backfilled (or in flight) per summary */
    size_t njobs;
} rt_perf_history;

typedef struct rt_perf_pick {
    const rt_perf_summary *summary;
    const rt_perf_alert *alert;
    size_t family;
    int round;           /* 1: the summary's first alert of this family */
    bool closes_summary; /* the summary is done once this alert is taken */
    char reason[RT_PERF_REASON_SIZE];
} rt_perf_pick;

typedef struct rt_perf_skip {
    const rt_perf_summary *summary;
    const rt_perf_alert *alert; /* NULL: the whole summary */
    char reason[RT_PERF_REASON_SIZE];
} rt_perf_skip;

/* An alert whose job another alert's backfill covers. */
typedef struct rt_perf_cover {
    const rt_perf_summary *summary;
    const rt_perf_alert *alert;
    long long by_alert_id; /* the picked alert of the same job, 0 when an earlier run's */
    char reason[RT_PERF_REASON_SIZE];
} rt_perf_cover;

typedef struct rt_perf_result {
    rt_perf_pick *picks; /* in priority order */
    size_t npicks;
    rt_perf_cover *covered; /* not counted against max_per_summary, costing nothing */
    size_t ncovered;
    rt_perf_skip *skips;
    size_t nskips;
    const rt_perf_summary **closed; /* done without a pick now (nothing worth taking) */
    size_t nclosed;
    int used[RT_PERF_MAX_FAMILIES + 1]; /* budget used once every pick is paid */
} rt_perf_result;

/* Picks from summaries as of `now`. history may be NULL. RT_OK or RT_ENOMEM; the result
 * points into summaries and is freed with rt_perf_result_free. */
RT_MUSTCHECK int rt_perf_pick_alerts(const rt_perf_summaries *summaries,
                                     const rt_perf_options *options, const rt_perf_history *history,
                                     time_t now, rt_perf_result *out);
void rt_perf_result_free(rt_perf_result *result);

/* "2019-05-20T11:41:31.419156" (optionally ending in Z or +00:00) as UTC seconds;
 * RT_EINVAL when it is not such a time. */
RT_MUSTCHECK int rt_perf_parse_time(const char *text, time_t *out);

#endif
