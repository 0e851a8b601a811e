/* SPDX-License-Identifier: MPL-2.0 */
/* perf_pick.c - Perfherder alert summaries parsed once, and the picking rules of
 * retrig-perf (see perf_pick.h). Pure. */
#include "common/core/perf_pick.h"

#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/limits.h"
#include "common/core/utf8.h"

/* ---- parsing ---------------------------------------------------------------------- */

int rt_perf_parse_time(const char *text, time_t *out)
{
    int y, mo, d, h, mi, s, n = 0;
    if (!text || sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6)
        return RT_EINVAL;
    const char *rest = text + n;
    if (*rest == '.') {
        rest++;
        if (!isdigit((unsigned char)*rest)) return RT_EINVAL;
        while (isdigit((unsigned char)*rest)) rest++;
    }
    if (*rest && strcmp(rest, "Z") != 0 && strcmp(rest, "+00:00") != 0) return RT_EINVAL;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970)
        return RT_EINVAL;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = s};
    *out = timegm(&tm);
    return RT_OK;
}

static bool copy_string(json_t *value, char *out, size_t size)
{
    const char *s = json_string_value(value);
    if (!s || strlen(s) >= size) return false;
    memcpy(out, s, strlen(s) + 1);
    return true;
}

static bool get_id(json_t *obj, const char *key, long long *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0) return false;
    *out = (long long)json_integer_value(v);
    return true;
}

/* The job of an alert within its summary: platform | suite | option collection | extra
 * options (sorted), each cut to its share of the key. Alerts of a suite's subtests share it. */
static void job_key(json_t *sig, rt_perf_alert *out)
{
    const char *options = json_string_value(json_object_get(sig, "option_collection_hash"));
    char extra[256] = "";
    json_t *list = json_object_get(sig, "extra_options");
    const char *items[16];
    size_t n = 0;
    for (size_t i = 0; json_is_array(list) && i < json_array_size(list) && n < 16; i++) {
        const char *v = json_string_value(json_array_get(list, i));
        if (v && strlen(v) < 64) items[n++] = v;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort: a handful at most */
        for (size_t k = i; k > 0 && strcmp(items[k - 1], items[k]) > 0; k--) {
            const char *t = items[k - 1];
            items[k - 1] = items[k];
            items[k] = t;
        }
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(extra), len = strlen(items[i]);
        if (used + len + 2 > sizeof extra) break;
        if (used) extra[used++] = ',';
        memcpy(extra + used, items[i], len + 1);
    }
    /* The extra options come last: a key too long for job_key is cut there (the length is
     * kept only to tell the compiler the cut is meant: -O0 builds warn otherwise). */
    int len = snprintf(out->job_key, sizeof out->job_key, "%.127s|%.127s|%.64s|%s", out->platform,
                       out->suite, options && strlen(options) <= 64 ? options : "", extra);
    (void)len;
}

static int parse_alert(json_t *a, rt_perf_alert *out, long long summary_id, char *errstr)
{
    memset(out, 0, sizeof *out);
    json_t *sig = json_object_get(a, "series_signature");
    json_t *status = json_object_get(a, "status");
    json_t *pct = json_object_get(a, "amount_pct");
    json_t *regression = json_object_get(a, "is_regression");
    const char *bad = NULL;
    if (!get_id(a, "id", &out->id))
        bad = "id";
    else if (!json_is_integer(status) || json_integer_value(status) < 0 ||
             json_integer_value(status) > INT_MAX)
        bad = "status";
    else if (!json_is_boolean(regression))
        bad = "is_regression";
    else if (!json_is_number(pct))
        bad = "amount_pct";
    else if (!json_is_object(sig) || !get_id(sig, "id", &out->signature_id))
        bad = "series_signature.id";
    else if (!copy_string(json_object_get(sig, "machine_platform"), out->platform,
                          sizeof out->platform))
        bad = "series_signature.machine_platform";
    if (bad) {
        rt_set_errstr(errstr, "alert summary %lld: an alert has no usable %s", summary_id, bad);
        return RT_EPROTO;
    }
    out->status = (int)json_integer_value(status);
    out->is_regression = json_is_true(regression);
    out->amount_pct = json_number_value(pct);
    /* Informative only: kept when present and short enough. */
    copy_string(json_object_get(sig, "signature_hash"), out->signature_hash,
                sizeof out->signature_hash);
    copy_string(json_object_get(sig, "suite"), out->suite, sizeof out->suite);
    copy_string(json_object_get(sig, "test"), out->test, sizeof out->test);
    job_key(sig, out);
    return RT_OK;
}

static int add_problem(rt_perf_summaries *out, long long summary_id, long long alert_id,
                       const char *reason)
{
    rt_perf_problem *p = realloc(out->problems, (out->nproblems + 1) * sizeof *p);
    if (!p) return RT_ENOMEM;
    out->problems = p;
    p += out->nproblems++;
    p->summary_id = summary_id;
    p->alert_id = alert_id;
    rt_utf8_format(p->reason, sizeof p->reason, "%s", reason);
    return RT_OK;
}

/* Parses one summary into *out; an unusable summary is RT_EPROTO (errstr), an unusable
 * alert is left out and listed in problems. */
static int parse_summary(json_t *s, rt_perf_summary *out, rt_perf_summaries *problems, char *errstr)
{
    memset(out, 0, sizeof *out);
    json_t *framework = json_object_get(s, "framework");
    json_t *alerts = json_object_get(s, "alerts");
    const char *bad = NULL;
    if (!json_is_object(s))
        bad = "object";
    else if (!get_id(s, "id", &out->id))
        bad = "id";
    else if (!get_id(s, "push_id", &out->push_id))
        bad = "push_id";
    else if (!json_is_integer(framework) || json_integer_value(framework) < 0 ||
             json_integer_value(framework) > 1000000)
        bad = "framework";
    else if (!copy_string(json_object_get(s, "repository"), out->repository,
                          sizeof out->repository))
        bad = "repository";
    else if (rt_perf_parse_time(json_string_value(json_object_get(s, "created")), &out->created) !=
             RT_OK)
        bad = "created";
    else if (!json_is_array(alerts))
        bad = "alerts";
    if (bad) {
        rt_set_errstr(errstr, "alert summary %lld: no usable %s", out->id, bad);
        return RT_EPROTO;
    }
    out->framework = (int)json_integer_value(framework);
    copy_string(json_object_get(s, "revision"), out->revision, sizeof out->revision);
    size_t n = json_array_size(alerts);
    if (n > RT_PERF_MAX_ALERTS) {
        rt_set_errstr(errstr, "alert summary %lld: more than %d alerts", out->id,
                      RT_PERF_MAX_ALERTS);
        return RT_EPROTO;
    }
    if (n == 0) return RT_OK;
    out->alerts = calloc(n, sizeof *out->alerts);
    if (!out->alerts) return RT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_array_get(alerts, i);
        rt_perf_alert *alert = &out->alerts[out->nalerts];
        if (parse_alert(a, alert, out->id, errstr) != RT_OK) {
            long long alert_id = 0;
            (void)get_id(a, "id", &alert_id);
            if (add_problem(problems, out->id, alert_id, errstr) != RT_OK) {
                free(out->alerts);
                out->alerts = NULL;
                return RT_ENOMEM;
            }
            continue;
        }
        bool seen = false; /* the same alert twice in one summary: the later copy wins */
        for (size_t k = 0; k < out->nalerts && !seen; k++)
            if (out->alerts[k].id == alert->id) {
                out->alerts[k] = *alert;
                seen = true;
            }
        if (!seen) out->nalerts++;
    }
    return RT_OK;
}

static rt_perf_alert *find_alert(rt_perf_summary *s, long long id)
{
    for (size_t i = 0; i < s->nalerts; i++)
        if (s->alerts[i].id == id) return &s->alerts[i];
    return NULL;
}

static rt_perf_summary *find_summary(rt_perf_summary *items, size_t n, long long id)
{
    for (size_t i = 0; i < n; i++)
        if (items[i].id == id) return &items[i];
    return NULL;
}

/* Merges summary s (a second copy) into into: the union of their alerts by id, s's values
 * winning; s's own fields replace into's. s is consumed. */
static int merge_summary(rt_perf_summary *into, rt_perf_summary *s)
{
    size_t extra = 0;
    for (size_t i = 0; i < s->nalerts; i++)
        if (!find_alert(into, s->alerts[i].id)) extra++;
    rt_perf_alert *alerts = realloc(into->alerts, (into->nalerts + extra + 1) * sizeof *alerts);
    if (!alerts) {
        free(s->alerts);
        return RT_ENOMEM;
    }
    into->alerts = alerts;
    for (size_t i = 0; i < s->nalerts; i++) {
        rt_perf_alert *old = find_alert(into, s->alerts[i].id);
        if (old)
            *old = s->alerts[i];
        else
            into->alerts[into->nalerts++] = s->alerts[i];
    }
    free(s->alerts);
    rt_perf_alert *keep = into->alerts;
    size_t nkeep = into->nalerts;
    *into = *s;
    into->alerts = keep;
    into->nalerts = nkeep;
    return RT_OK;
}

int rt_perf_summaries_parse(const char *text, size_t len, rt_perf_summaries *out, char **next,
                            char *errstr)
{
    if (next) *next = NULL;
    json_error_t error;
    json_t *doc = json_loadb(text, len, 0, &error);
    if (!doc) {
        rt_set_errstr(errstr, "alert summaries are not JSON: %s (line %d)", error.text, error.line);
        return RT_EPROTO;
    }
    int rc = RT_EPROTO;
    json_t *list = doc, *one = NULL;
    if (json_is_object(doc) && json_object_get(doc, "results")) {
        list = json_object_get(doc, "results");
        json_t *n = json_object_get(doc, "next");
        if (!json_is_null(n) && n && !json_is_string(n)) {
            rt_set_errstr(errstr, "alert summary page: next is neither a URL nor null");
            goto out;
        }
        if (next && json_is_string(n) && json_string_length(n) > 0) {
            *next = strdup(json_string_value(n));
            if (!*next) {
                rc = RT_ENOMEM;
                goto out;
            }
        }
    } else if (json_is_object(doc)) {
        one = doc;
    }
    if (!one && !json_is_array(list)) {
        rt_set_errstr(errstr, "alert summaries: expected a list, a page or a summary");
        goto out;
    }
    size_t n = one ? 1 : json_array_size(list);
    if (out->count + n > RT_PERF_MAX_SUMMARIES) {
        rt_set_errstr(errstr, "more than %d alert summaries", RT_PERF_MAX_SUMMARIES);
        rc = RT_ETOOBIG;
        goto out;
    }
    rt_perf_summary *items = realloc(out->items, (out->count + n + 1) * sizeof *items);
    if (!items) {
        rc = RT_ENOMEM;
        goto out;
    }
    out->items = items;
    size_t added = 0;
    for (size_t i = 0; i < n; i++) {
        rt_perf_summary s;
        char why[RT_ERRSTR_SIZE] = "";
        rc = parse_summary(one ? one : json_array_get(list, i), &s, out, why);
        if (rc == RT_EPROTO) { /* left out, the rest of the page is read */
            rc = add_problem(out, s.id, 0, why);
            if (rc != RT_OK) goto undo;
            continue;
        }
        if (rc != RT_OK) goto undo;
        rt_perf_summary *twin = find_summary(out->items, out->count + added, s.id);
        if (twin) {
            if ((rc = merge_summary(twin, &s)) != RT_OK) goto undo;
            continue;
        }
        out->items[out->count + added++] = s;
    }
    out->count += added;
    rc = RT_OK;
    goto out;
undo:
    for (size_t k = 0; k < added; k++) free(out->items[out->count + k].alerts);
out:
    if (rc != RT_OK && next) {
        free(*next);
        *next = NULL;
    }
    json_decref(doc);
    return rc;
}

void rt_perf_summaries_free(rt_perf_summaries *summaries)
{
    if (!summaries) return;
    for (size_t i = 0; i < summaries->count; i++) free(summaries->items[i].alerts);
    free(summaries->items);
    free(summaries->problems);
    memset(summaries, 0, sizeof *summaries);
}

/* ---- options ---------------------------------------------------------------------- */

static int parse_family(const char *item, rt_perf_family *f)
{
    memset(f, 0, sizeof *f);
    const char *eq = strchr(item, '=');
    if (!eq || eq == item || (size_t)(eq - item) >= sizeof f->name) return RT_EINVAL;
    memcpy(f->name, item, (size_t)(eq - item));
    while (f->name[0] && f->name[strlen(f->name) - 1] == ' ') f->name[strlen(f->name) - 1] = '\0';
    const char *p = eq + 1;
    while (*p) {
        while (*p == ' ' || *p == '/') p++;
        if (!*p) break;
        const char *end = p;
        while (*end && *end != '/') end++;
        const char *last = end;
        while (last > p && last[-1] == ' ') last--;
        if (f->nprefixes == RT_PERF_MAX_PREFIXES || (size_t)(last - p) >= sizeof f->prefixes[0])
            return RT_EINVAL;
        memcpy(f->prefixes[f->nprefixes], p, (size_t)(last - p));
        f->prefixes[f->nprefixes++][last - p] = '\0';
        p = end;
    }
    return f->name[0] && f->nprefixes ? RT_OK : RT_EINVAL;
}

int rt_perf_options_build(rt_perf_options *o, const rt_perf_settings *cfg, char *errstr)
{
    memset(o, 0, sizeof *o);
    const rt_strlist *fams = cfg->platform_families;
    if (!fams || fams->count == 0) {
        rt_set_errstr(errstr, "bad value for 'perf_platform_families': empty (every alert would "
                              "be in family other)");
        return RT_ECONFIG;
    }
    for (size_t i = 0; i < fams->count && i < RT_PERF_MAX_FAMILIES; i++) {
        if (parse_family(fams->items[i], &o->families[o->nfamilies]) != RT_OK ||
            !strcmp(o->families[o->nfamilies].name, "other")) {
            rt_set_errstr(errstr,
                          "bad value for 'perf_platform_families': '%s' is not NAME=PREFIX/PREFIX "
                          "(and 'other' is reserved)",
                          fams->items[i]);
            return RT_ECONFIG;
        }
        o->nfamilies++;
    }
    /* The five platforms Perfherder's own backfill bot ranks (windows10, windows7, linux,
     * osx, android): a configuration without one of them would rank it as "other". */
    static const char *const seed[] = {"windows10", "windows7", "linux", "osx", "android"};
    for (size_t i = 0; i < sizeof seed / sizeof *seed; i++) {
        bool found = false;
        for (size_t f = 0; f < o->nfamilies && !found; f++)
            found = !strcmp(o->families[f].name, seed[i]);
        if (!found) {
            rt_set_errstr(errstr,
                          "bad value for 'perf_platform_families': no family named %s (windows10, "
                          "windows7, linux, osx and android are required; add others as you "
                          "wish)",
                          seed[i]);
            return RT_ECONFIG;
        }
    }
    char inner[RT_ERRSTR_SIZE] = "";
    if (rt_budget_check_limits(cfg->budget_limits, inner) != RT_OK) {
        rt_set_errstr(errstr, "bad value for 'perf_budget_limits': %s", inner);
        return RT_ECONFIG;
    }
    for (size_t f = 0; f <= o->nfamilies; f++) {
        if (rt_budget_limit_for(cfg->budget_limits, rt_perf_family_name(o, f), 0, &o->limit[f]) !=
            RT_OK)
            return RT_ECONFIG;
    }
    for (size_t i = 0; i < cfg->frameworks->count; i++) {
        char *end = NULL;
        long v = strtol(cfg->frameworks->items[i], &end, 10);
        if (end == cfg->frameworks->items[i] || *end || v < 0 || v > 1000000) {
            rt_set_errstr(errstr, "bad value for 'perf_frameworks': '%s' is not a framework id",
                          cfg->frameworks->items[i]);
            return RT_ECONFIG;
        }
    }
    o->cost = cfg->backfill_depth * cfg->backfill_times;
    o->max_per_summary = cfg->max_per_summary;
    o->min_amount_pct = cfg->min_amount_pct;
    o->min_age_s = (long)cfg->min_age_minutes * 60;
    o->include_improvements = cfg->include_improvements;
    o->repositories = cfg->repositories;
    o->frameworks = cfg->frameworks;
    return RT_OK;
}

size_t rt_perf_family_of(const rt_perf_options *o, const char *platform)
{
    for (size_t f = 0; f < o->nfamilies; f++)
        for (size_t k = 0; k < o->families[f].nprefixes; k++)
            if (!strncmp(platform, o->families[f].prefixes[k], strlen(o->families[f].prefixes[k])))
                return f;
    return o->nfamilies;
}

const char *rt_perf_family_name(const rt_perf_options *o, size_t family)
{
    return family < o->nfamilies ? o->families[family].name : "other";
}

/* ---- picking ---------------------------------------------------------------------- */

typedef enum { CAND_OPEN, CAND_PICKED, CAND_BUDGET, CAND_FULL, CAND_COVERED } cand_state;

typedef struct cand {
    size_t summary; /* index in summaries */
    const rt_perf_alert *alert;
    size_t family;
    cand_state state;
    char reason[RT_PERF_REASON_SIZE];
} cand;

typedef struct summary_state {
    bool considered; /* old enough, configured, not closed */
    int quota;
    int budget_passed;
    size_t last_pick; /* index in picks + 1; 0: none */
    int per_family[RT_PERF_MAX_FAMILIES + 1];
} summary_state;

static int compare_cands(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->alert->is_regression != b->alert->is_regression) return a->alert->is_regression ? -1 : 1;
    if (a->family != b->family) return a->family < b->family ? -1 : 1;
    if (a->alert->amount_pct != b->alert->amount_pct)
        return a->alert->amount_pct > b->alert->amount_pct ? -1 : 1;
    return a->alert->id < b->alert->id ? -1 : a->alert->id > b->alert->id;
}

static bool in_list(const rt_strlist *list, const char *value)
{
    if (!list || list->count == 0) return true;
    for (size_t i = 0; i < list->count; i++)
        if (!strcmp(list->items[i], value)) return true;
    return false;
}

static const rt_perf_taken *taken_of(const rt_perf_history *h, long long summary_id)
{
    for (size_t i = 0; h && i < h->nsummaries; i++)
        if (h->summaries[i].summary_id == summary_id) return &h->summaries[i];
    return NULL;
}

/* Whether an earlier run backfilled this summary's job. */
static bool job_backfilled(const rt_perf_history *h, long long summary_id, const char *job_key)
{
    for (size_t i = 0; h && i < h->njobs; i++)
        if (h->jobs[i].summary_id == summary_id && h->jobs[i].job_key &&
            !strcmp(h->jobs[i].job_key, job_key))
            return true;
    return false;
}

static int add_cover(rt_perf_result *r, size_t *cap, const rt_perf_summary *s,
                     const rt_perf_alert *a, long long by, const char *reason)
{
    if (r->ncovered == *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        rt_perf_cover *p = realloc(r->covered, n * sizeof *p);
        if (!p) return RT_ENOMEM;
        r->covered = p;
        *cap = n;
    }
    rt_perf_cover *c = &r->covered[r->ncovered++];
    c->summary = s;
    c->alert = a;
    c->by_alert_id = by;
    snprintf(c->reason, sizeof c->reason, "%s", reason);
    return RT_OK;
}

static bool alert_handled(const rt_perf_history *h, long long alert_id)
{
    for (size_t i = 0; h && i < h->nhandled_alerts; i++)
        if (h->handled_alerts[i] == alert_id) return true;
    return false;
}

static int add_skip(rt_perf_result *r, size_t *cap, const rt_perf_summary *s,
                    const rt_perf_alert *a, const char *reason)
{
    if (r->nskips == *cap) {
        size_t n = *cap ? *cap * 2 : 32;
        rt_perf_skip *p = realloc(r->skips, n * sizeof *p);
        if (!p) return RT_ENOMEM;
        r->skips = p;
        *cap = n;
    }
    rt_perf_skip *k = &r->skips[r->nskips++];
    k->summary = s;
    k->alert = a;
    snprintf(k->reason, sizeof k->reason, "%s", reason);
    return RT_OK;
}

/* Why an alert of a considered summary is no candidate, or NULL when it is one. */
static const char *not_candidate(const rt_perf_alert *a, const rt_perf_options *o,
                                 const rt_perf_history *h, char *buf, size_t size)
{
    if (alert_handled(h, a->id)) return "handled before";
    if (a->status != 0) {
        snprintf(buf, size, "triaged (status %d)", a->status);
        return buf;
    }
    if (!a->is_regression && !o->include_improvements)
        return "improvement (include_improvements is off)";
    if (a->amount_pct < o->min_amount_pct) {
        snprintf(buf, size, "too small (%.2f%% < %.2f%%)", a->amount_pct, o->min_amount_pct);
        return buf;
    }
    return NULL;
}

/* The picked alert of the same summary and job as candidate c, or NULL. */
static const rt_perf_alert *covered_by_pick(const rt_perf_result *r, const cand *cands, size_t c)
{
    const rt_perf_alert *a = cands[c].alert;
    for (size_t i = 0; i < r->npicks; i++)
        if (r->picks[i].alert != a && r->picks[i].summary->alerts <= a &&
            a < r->picks[i].summary->alerts + r->picks[i].summary->nalerts &&
            !strcmp(r->picks[i].alert->job_key, a->job_key))
            return r->picks[i].alert;
    return NULL;
}

/* Long because it is the pick's phases in the order they apply (summaries filtered, alerts
 * covered by earlier backfills, the rounds per family, the alerts passed over that another pick
 * took), over candidate and summary state that every phase reads and changes. */
int rt_perf_pick_alerts(const rt_perf_summaries *summaries, const rt_perf_options *o,
                        const rt_perf_history *h, time_t now, rt_perf_result *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out->used, o->used, sizeof out->used);
    size_t nalerts = 0, skip_cap = 0, cover_cap = 0, ncands = 0;
    for (size_t i = 0; i < summaries->count; i++) nalerts += summaries->items[i].nalerts;
    cand *cands = calloc(nalerts + 1, sizeof *cands);
    summary_state *st = calloc(summaries->count + 1, sizeof *st);
    out->picks = calloc(nalerts + 1, sizeof *out->picks);
    out->closed = calloc(summaries->count + 1, sizeof *out->closed);
    int rc = RT_ENOMEM;
    if (!cands || !st || !out->picks || !out->closed) goto out;

    char why[RT_PERF_REASON_SIZE], buf[RT_PERF_REASON_SIZE];
    for (size_t i = 0; i < summaries->count; i++) {
        const rt_perf_summary *s = &summaries->items[i];
        const rt_perf_taken *t = taken_of(h, s->id);
        char fw[16];
        snprintf(fw, sizeof fw, "%d", s->framework);
        const char *skip = NULL;
        if (!in_list(o->repositories, s->repository)) {
            snprintf(why, sizeof why, "repository %s is not configured", s->repository);
            skip = why;
        } else if (!in_list(o->frameworks, fw)) {
            snprintf(why, sizeof why, "framework %d is not configured", s->framework);
            skip = why;
        } else if (t && t->closed) {
            skip = "summary handled before";
        } else if (now - s->created < o->min_age_s) {
            snprintf(why, sizeof why, "too young (created %ld min ago, min_age %ld min)",
                     (long)(now - s->created) / 60, o->min_age_s / 60);
            skip = why;
        }
        if (skip) {
            if ((rc = add_skip(out, &skip_cap, s, NULL, skip)) != RT_OK) goto out;
            continue;
        }
        st[i].considered = true;
        st[i].quota = o->max_per_summary - (t ? t->taken : 0);
        for (size_t k = 0; k < s->nalerts; k++) {
            const rt_perf_alert *a = &s->alerts[k];
            const char *no = not_candidate(a, o, h, buf, sizeof buf);
            if (no) {
                if ((rc = add_skip(out, &skip_cap, s, a, no)) != RT_OK) goto out;
                continue;
            }
            cands[ncands++] =
                (cand){.summary = i, .alert = a, .family = rt_perf_family_of(o, a->platform)};
        }
    }
    qsort(cands, ncands, sizeof *cands, compare_cands);

    /* An alert whose job an earlier run backfilled is covered by it. */
    for (size_t c = 0; c < ncands; c++) {
        if (!job_backfilled(h, summaries->items[cands[c].summary].id, cands[c].alert->job_key))
            continue;
        cands[c].state = CAND_COVERED;
        if ((rc = add_cover(out, &cover_cap, &summaries->items[cands[c].summary], cands[c].alert, 0,
                            "its job was backfilled before (same job)")) != RT_OK)
            goto out;
    }
    /* Round r: a summary takes at most one more job per family, in priority order; every
     * regression's rounds first, then the improvements'. A family's count goes on from one
     * phase to the next, so an improvement of a family that a regression already gave a job
     * waits for the round after it: the rounds go on while any candidate waits for a later
     * one (a round where nothing could be taken is not the end). */
    for (int phase = 0; phase < 2; phase++) {
        bool waiting = true;
        for (int round = 0; waiting; round++) {
            waiting = false;
            for (size_t c = 0; c < ncands; c++) {
                cand *x = &cands[c];
                summary_state *ss = &st[x->summary];
                if (x->state != CAND_OPEN || x->alert->is_regression != (phase == 0)) continue;
                if (covered_by_pick(out, cands, c)) {
                    const rt_perf_alert *by = covered_by_pick(out, cands, c);
                    x->state = CAND_COVERED;
                    char text[RT_PERF_REASON_SIZE];
                    snprintf(text, sizeof text, "same job as alert %lld, which is backfilled",
                             by->id);
                    if ((rc = add_cover(out, &cover_cap, &summaries->items[x->summary], x->alert,
                                        by->id, text)) != RT_OK)
                        goto out;
                    continue;
                }
                if (ss->quota <= 0) {
                    x->state = CAND_FULL;
                    snprintf(x->reason, sizeof x->reason,
                             "summary gave its %d jobs (max_per_summary)", o->max_per_summary);
                    continue;
                }
                if (ss->per_family[x->family] > round) { /* a later round */
                    waiting = true;
                    continue;
                }
                size_t f = x->family;
                if (out->used[f] + o->cost > o->limit[f]) {
                    x->state = CAND_BUDGET;
                    ss->budget_passed++;
                    snprintf(x->reason, sizeof x->reason,
                             "family %s out of budget (%d of %d jobs used today, a backfill "
                             "costs %d)",
                             rt_perf_family_name(o, f), out->used[f], o->limit[f], o->cost);
                    continue;
                }
                out->used[f] += o->cost;
                ss->quota--;
                ss->per_family[f]++;
                x->state = CAND_PICKED;
                rt_perf_pick *p = &out->picks[out->npicks++];
                p->summary = &summaries->items[x->summary];
                p->alert = x->alert;
                p->family = f;
                p->round = round + 1;
                snprintf(p->reason, sizeof p->reason,
                         "%s, family %s (priority %zu), %.2f%%, round %d",
                         x->alert->is_regression ? "regression" : "improvement",
                         rt_perf_family_name(o, f), f + 1, x->alert->amount_pct, round + 1);
                ss->last_pick = out->npicks;
            }
        }
    }
    /* An alert passed over (budget, quota) whose job another alert's pick then took. */
    for (size_t c = 0; c < ncands; c++) {
        if (cands[c].state != CAND_BUDGET && cands[c].state != CAND_FULL) continue;
        const rt_perf_alert *by = covered_by_pick(out, cands, c);
        if (!by) continue;
        if (cands[c].state == CAND_BUDGET) st[cands[c].summary].budget_passed--;
        cands[c].state = CAND_COVERED;
        char text[RT_PERF_REASON_SIZE];
        snprintf(text, sizeof text, "same job as alert %lld, which is backfilled", by->id);
        if ((rc = add_cover(out, &cover_cap, &summaries->items[cands[c].summary], cands[c].alert,
                            by->id, text)) != RT_OK)
            goto out;
    }
    for (size_t c = 0; c < ncands; c++) {
        if (cands[c].state == CAND_PICKED || cands[c].state == CAND_COVERED) continue;
        const rt_perf_summary *s = &summaries->items[cands[c].summary];
        if ((rc = add_skip(out, &skip_cap, s, cands[c].alert, cands[c].reason)) != RT_OK) goto out;
    }
    /* Done: quota used, or nothing passed over that a later run (new budget) could take. */
    for (size_t i = 0; i < summaries->count; i++) {
        if (!st[i].considered || (st[i].quota > 0 && st[i].budget_passed > 0)) continue;
        if (st[i].last_pick)
            out->picks[st[i].last_pick - 1].closes_summary = true;
        else
            out->closed[out->nclosed++] = &summaries->items[i];
    }
    rc = RT_OK;
out:
    free(cands);
    free(st);
    if (rc != RT_OK) rt_perf_result_free(out);
    return rc;
}

void rt_perf_result_free(rt_perf_result *r)
{
    if (!r) return;
    free(r->picks);
    free(r->covered);
    free(r->skips);
    free(r->closed);
    memset(r, 0, sizeof *r);
}
