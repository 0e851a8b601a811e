/* SPDX-License-Identifier: MPL-2.0 */
/* stream.c - the chaos and cluster tests' stream, Taskcluster's part and the checks
 * (stream.h). */
#include "support/util.h"

#include "support/stream.h"

#include <hiredis/hiredis.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/errorsummary.h"
#include "common/core/history.h"
#include "support/fixtures.h"

#define GWX_PULSE    "pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_DEF      "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
#define GWX_ROUTE    "tc-treeherder.v2.autoland.b437ae030825a8ea9fa7a632b1fcb9becbe11f69.88560"
#define GWX_LABEL    "test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
#define GWX_REVISION "b437ae030825a8ea9fa7a632b1fcb9becbe11f69"
#define B3E_PULSE    "pulse/treeherder_task-completed_B3EheQ-IQ5aPzw34KS_a6g.json"
#define B3E_ROUTE    "tc-treeherder.v2.autoland.918d7c84da371bda26460fb4b50f161d32107880.88554"
#define B3E_DEF      "taskcluster/task_definition_B3EheQ-IQ5aPzw34KS_a6g.json"
#define FUZZ_DONE    "pulse/fuzzmanager_task-completed_Z1kaoRtHRRWyyuMDqadYPA.json"
#define FUZZ_EXC     "pulse/fuzzmanager_task-exception_f8fRfedPSp2-A7M9Zhxe-Q.json"
#define DEC_FIX      "taskcluster/task_definition_build-android-api-16-debug.json"
#define ES_FAIL      "errorsummary/mochitest-browser-chrome_errorsummary.log"
#define ES_PASS      "errorsummary/mochitest-browser-chrome_pass_errorsummary.log"
#define ES_INFRA     "errorsummary/mochitest-browser-chrome_infra_errorsummary.log"
#define BUGSUG       "treeherder/bug_suggestions.json"
#define UNLIMITED    "linux1804-64-qr"

typedef enum { K_ELIGIBLE, K_MALFORMED, K_OTHER, K_COMPLETED, K_EXCEPTION } kind;

typedef struct entry {
    kind kind;
    char task_id[23];
    char message_id[32];
    const char *event;
    const char *route;
    char *body;
    size_t len;
    const char *reason_prefix; /* malformed: the dead-letter reason expected */
    int dead_letters[2];       /* malformed: copies dead-lettered from each Pulse queue */
    bool history;              /* a test run retrig-history must record */
    const char *history_es;    /* its errorsummary fixture (NULL: it has none) */
    int history_runs;          /* history_runs rows found for it */
} entry;

typedef struct failure {
    char task_id[23];
    char group[23];
    int push; /* its group's index */
    char label[256];
    bool limited;
    bool intermittent;
    int played;
    int sets;
    int triggers;
    int rounds; /* pooled: the rounds made of its set (hook triggers due) */
} failure;

struct rt_stream {
    rt_ch *h;
    const char *tag, *client_id, *token;
    size_t nmessages, max_played;
    int neligible, nmalformed, nother, ngroups, limit;
    int configs;  /* pooled (stream.h); 0: per-task sets */
    int runs_cap; /* retriggered runs played per failure */
    char (*revisions)[41];
    char (*routes)[128]; /* each push's tc-treeherder route (pooled) */
    struct {
        int classify, retrigger, decide, history;
    } replicas;
    char (*groups)[23];
    failure *fails;
    entry *stream;
    size_t published;
    char (*played_ids)[23];
    const char **played_es; /* the errorsummary each played run serves */
    int *played_history;    /* history_runs rows found for each */
    size_t nplayed;
    size_t triggers_played;
    long respawns;
    int max_counter;
    char *eligible_ids;
};

void rt_stream_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long next_job_id(void)
{
    static long id;
    if (!id) id = 700000000L + (random() % 1000000) * 100;
    return ++id;
}

rt_stream *rt_stream_new(rt_ch *h, const rt_stream_sizes *z)
{
    rt_stream *f = calloc(1, sizeof *f);
    assert_non_null(f);
    *f = (rt_stream){.h = h,
                     .tag = z->tag,
                     .client_id = z->client_id,
                     .token = z->token,
                     .nmessages = (size_t)z->messages,
                     .configs = z->configs,
                     .runs_cap = z->configs ? RT_STREAM_POOLED_RUNS : RT_STREAM_RETRIGGERS,
                     .neligible = z->eligible,
                     .nmalformed = z->malformed,
                     .nother = z->other,
                     .ngroups = z->groups,
                     .limit = z->limit};
    f->max_played = (size_t)z->eligible * (size_t)f->runs_cap;
    f->replicas.classify = z->replicas.classify;
    f->replicas.retrigger = z->replicas.retrigger;
    f->replicas.decide = z->replicas.decide;
    f->replicas.history = z->replicas.history;
    f->groups = calloc((size_t)z->groups, sizeof *f->groups);
    f->revisions = calloc((size_t)z->groups, sizeof *f->revisions);
    f->routes = calloc((size_t)z->groups, sizeof *f->routes);
    f->fails = calloc((size_t)z->eligible, sizeof *f->fails);
    f->stream = calloc(f->nmessages, sizeof *f->stream);
    f->played_ids = calloc(f->max_played, sizeof *f->played_ids);
    f->played_es = calloc(f->max_played, sizeof *f->played_es);
    f->played_history = calloc(f->max_played, sizeof *f->played_history);
    assert_true(f->groups && f->revisions && f->routes && f->fails && f->stream && f->played_ids &&
                f->played_es && f->played_history);
    char n[16], limits[128];
    snprintf(n, sizeof n, "%d", RT_STREAM_RETRIGGERS);
    snprintf(limits, sizeof limits, "%s=%d, *=100000", RT_STREAM_LIMITED, z->limit);
    rt_ch_setenv(h, "RETRIGGERS_PER_FAILURE", n);
    rt_ch_setenv(h, "DECIDE_THRESHOLD", n);
    rt_ch_setenv(h, "BUDGET_LIMITS", limits);
    rt_ch_setenv(h, "BUDGET_MINIMUM", n);
    rt_ch_setenv(h, "TASKCLUSTER_CLIENT_ID", z->client_id);
    rt_ch_setenv(h, "TASKCLUSTER_ACCESS_TOKEN", z->token);
    rt_ch_setenv(h, "DECIDE_DELAYS_MS", "200,400,800,1600");
    rt_ch_setenv(h, "SET_DEADLINE_MINUTES", "1");
    rt_ch_setenv(h, "DECIDE_SWEEP_INTERVAL_S", "5");
    rt_ch_setenv(h, "HTTP_TIMEOUT_MS", "5000");
    rt_ch_setenv(h, "HTTP_CONNECT_TIMEOUT_MS", "1000");
    char max_bytes[16];
    snprintf(max_bytes, sizeof max_bytes, "%d", RT_STREAM_MAX_BYTES);
    rt_ch_setenv(h, "MAX_MESSAGE_BYTES", max_bytes);
    if (z->configs) {
        /* One pooled set per push; its settle window and deadline short, swept every second. */
        rt_ch_setenv(h, "DECIDE_POLICY", "pooled");
        rt_ch_setenv(h, "DECIDE_POOL_SETTLE_S", "2");
        rt_ch_setenv(h, "DECIDE_POOL_DEADLINE_MINUTES", "1");
        rt_ch_setenv(h, "DECIDE_SWEEP_INTERVAL_S", "1");
    }
    return f;
}

void rt_stream_free(rt_stream *f)
{
    if (!f) return;
    char q[256];
    const char *delays[] = {"200", "400", "800", "1600"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(q, sizeof q, "%s.decide.delay.%s", f->h->ns, delays[i]);
        if (rt_amqp_delete_queue(f->h->amqp, q) != RT_OK) {}
    }
    snprintf(q, sizeof q, "%s.decisions", f->h->ns);
    if (rt_amqp_delete_exchange(f->h->amqp, q) != RT_OK) {}
    snprintf(q, sizeof q, "%s-history", f->h->pulse_queue);
    if (rt_amqp_delete_queue(f->h->amqp, q) != RT_OK) {}
    const char *history_queues[] = {"history-retry", "history-retry.delay.300",
                                    "history-retry.delay.600"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(q, sizeof q, "%s.%s", f->h->ns, history_queues[i]);
        if (rt_amqp_delete_queue(f->h->amqp, q) != RT_OK) {}
    }
    for (size_t i = 0; i < f->nmessages; i++) free(f->stream[i].body);
    free(f->groups);
    free(f->revisions);
    free(f->routes);
    free(f->fails);
    free(f->stream);
    free(f->played_ids);
    free(f->played_es);
    free(f->played_history);
    free(f->eligible_ids);
    free(f);
}

/* ---- the upstream data ---- */

static json_t *scenario_new(void)
{
    return json_pack("{s:{}, s:{}, s:{}, s:{}}", "tasks", "artifacts", "jobs", "bug_suggestions");
}

/* A definition of the recorded test task: its group, label, platform and tier. */
static json_t *test_definition(const char *group, const char *label, const char *platform, int tier)
{
    json_t *def = rt_ch_task_definition(GWX_DEF, group, label);
    json_t *th = json_object_get(json_object_get(def, "extra"), "treeherder");
    if (platform)
        json_object_set_new(json_object_get(th, "machine"), "platform", json_string(platform));
    if (tier) json_object_set_new(th, "tier", json_integer(tier));
    return def;
}

/* The push of a failure: the recorded one, or (pooled) its group's own. */
static const char *revision_of(const rt_stream *f, int push)
{
    return f->configs ? f->revisions[push] : GWX_REVISION;
}

static const char *route_of(const rt_stream *f, int push)
{
    return f->configs ? f->routes[push] : GWX_ROUTE;
}

/* An eligible failure's definition: on its platform, and (pooled) its push's route. */
static json_t *failure_definition(const rt_stream *f, const failure *x)
{
    json_t *def =
        test_definition(x->group, x->label, x->limited ? RT_STREAM_LIMITED : UNLIMITED, 0);
    if (f->configs) json_object_set_new(def, "routes", json_pack("[s]", f->routes[x->push]));
    return def;
}

static void add_artifacts(json_t *scenario, const char *task_id, const char *errorsummary)
{
    json_t *list = json_pack("[{s:s, s:s}]", "name", "public/logs/live_backing.log", "content",
                             "recorded log\n");
    if (errorsummary)
        json_array_append_new(list, json_pack("{s:s, s:s}", "name",
                                              "public/test_info/mochitest_errorsummary.log",
                                              "fixture", errorsummary));
    json_object_set_new(json_object_get(scenario, "artifacts"), task_id,
                        json_pack("{s:o}", "0", list));
}

/* An unclassified Treeherder job of a failing run, with the recorded bug_suggestions. */
static void add_job(json_t *scenario, const char *task_id)
{
    long job = next_job_id();
    char id[32];
    snprintf(id, sizeof id, "%ld", job);
    json_object_set_new(json_object_get(scenario, "jobs"), task_id,
                        json_pack("[{s:I, s:i, s:s, s:s, s:i}]", "id", (json_int_t)job, "retry_id",
                                  0, "result", "testfailed", "state", "completed",
                                  "failure_classification_id", 1));
    json_object_set_new(json_object_get(scenario, "bug_suggestions"), id,
                        json_pack("{s:s}", "fixture", BUGSUG));
}

static void load(rt_ch *h, json_t **scenario)
{
    rt_ch_scenario(h, *scenario);
    json_decref(*scenario);
    *scenario = scenario_new();
}

/* ---- the stream ---- */

static json_t *json_fixture_body(const char *name)
{
    json_t *doc = json_load_file(rt_test_fixture(name), 0, NULL);
    assert_non_null(doc);
    json_t *payload = json_object_get(doc, "payload");
    if (payload) {
        payload = json_deep_copy(payload);
        json_decref(doc);
        return payload;
    }
    return doc;
}

static void set_body(entry *e, json_t *body)
{
    e->body = json_dumps(body, JSON_COMPACT);
    assert_non_null(e->body);
    e->len = strlen(e->body);
    json_decref(body);
}

static void failed_body(entry *e, const char *group, const char *route)
{
    e->body = rt_ch_failed_message(GWX_PULSE, e->task_id, group);
    e->len = strlen(e->body);
    e->event = "task-failed";
    e->route = route;
}

static void make_malformed(entry *e, int i)
{
    char task_id[23];
    rt_ch_slugid(task_id);
    e->event = "task-failed";
    e->route = GWX_ROUTE;
    char *text = rt_ch_failed_message(GWX_PULSE, task_id, NULL);
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(doc);
    json_t *st = json_object_get(doc, "status");
    switch (i % 5) {
    case 0:
        json_decref(doc);
        e->body = strdup("{\"version\": 1, \"status\": ");
        e->len = strlen(e->body);
        e->reason_prefix = "invalid-json";
        return;
    case 1:
        json_object_del(st, "taskId");
        e->reason_prefix = "missing-field:status.taskId";
        break;
    case 2:
        json_object_set_new(doc, "runId", json_string("0"));
        e->reason_prefix = "wrong-type:runId";
        break;
    case 3: {
        size_t size = RT_STREAM_MAX_BYTES + 1024; /* over max_message_bytes */
        char *padding = malloc(size + 1);
        assert_non_null(padding);
        memset(padding, 'x', size);
        padding[size] = '\0';
        json_object_set_new(doc, "padding", json_string(padding));
        free(padding);
        e->reason_prefix = "too-big";
        break;
    }
    default:
        json_object_set_new(st, "state", json_string("completed"));
        json_object_set_new(json_array_get(json_object_get(st, "runs"), 0), "state",
                            json_string("completed"));
        e->reason_prefix = "invalid-value:status.runs[].state";
        break;
    }
    set_body(e, doc);
}

/* Builds the stream and loads what the fake must serve for it. */
static void build_stream(rt_stream *f)
{
    rt_ch *h = f->h;
    json_t *s = scenario_new();
    json_object_set_new(s, "hook_clients", json_pack("{s:s}", f->client_id, f->token));
    for (int g = 0; g < f->ngroups; g++) {
        rt_ch_slugid(f->groups[g]);
        if (f->configs) { /* a push of its own: a revision and its route */
            for (int c = 0; c < 40; c++) f->revisions[g][c] = "0123456789abcdef"[random() % 16];
            snprintf(f->routes[g], sizeof f->routes[g], "tc-treeherder.v2.autoland.%s.%d",
                     f->revisions[g], 90000 + g);
        }
        json_object_set_new(json_object_get(s, "tasks"), f->groups[g],
                            json_pack("{s:s, s:{s:s}}", "fixture", DEC_FIX, "override",
                                      "taskGroupId", f->groups[g]));
        json_object_set_new(
            json_object_get(s, "artifacts"), f->groups[g],
            json_pack("{s:[o]}", "0", rt_ch_actions_artifact(f->groups[g], revision_of(f, g))));
    }
    load(h, &s);

    /* Pooled: push g fails on 1 + g % configs configurations, a build type each. */
    static const char *const types[] = {"debug", "opt", "asan", "tsan", "ccov", "pgo"};
    assert_true(f->configs <= (int)(sizeof types / sizeof types[0]));
    int *push_of = calloc((size_t)f->neligible, sizeof *push_of);
    int *config_of = calloc((size_t)f->neligible, sizeof *config_of);
    assert_true(push_of && config_of);
    int placed = 0;
    for (int g = 0; f->configs && g < f->ngroups; g++)
        for (int k = 0; k <= g % f->configs; k++, placed++) {
            assert_true(placed < f->neligible);
            push_of[placed] = g;
            config_of[placed] = k;
        }
    if (f->configs) assert_int_equal(placed, f->neligible); /* eligible: the sum over pushes */

    size_t n = 0;
    for (int i = 0; i < f->neligible; i++, n++) {
        failure *x = &f->fails[i];
        entry *e = &f->stream[n];
        e->kind = K_ELIGIBLE;
        rt_ch_slugid(x->task_id);
        memcpy(e->task_id, x->task_id, sizeof e->task_id);
        x->push = f->configs ? push_of[i] : i % f->ngroups;
        snprintf(x->group, sizeof x->group, "%s", f->groups[x->push]);
        if (f->configs)
            snprintf(x->label, sizeof x->label,
                     "test-android-em-7.0-x86_64/%s-mochitest-e10s-1-%s-%s-%d", types[config_of[i]],
                     f->tag, x->group, i);
        else
            snprintf(x->label, sizeof x->label, "%s-%s-%s-%d", GWX_LABEL, f->tag, x->group, i);
        x->limited = f->configs ? config_of[i] % 2 == 0 : i % 2 == 0;
        x->intermittent = i % 3 == 0;
        json_object_set_new(json_object_get(s, "tasks"), x->task_id, failure_definition(f, x));
        add_artifacts(s, x->task_id, ES_FAIL);
        add_job(s, x->task_id);
        failed_body(e, x->group, route_of(f, x->push));
        e->history = true;
        e->history_es = ES_FAIL;
        if (i % 20 == 19) load(h, &s);
    }
    load(h, &s);
    free(push_of);
    free(config_of);
    for (int i = 0; i < f->nmalformed; i++, n++) {
        f->stream[n].kind = K_MALFORMED;
        make_malformed(&f->stream[n], i);
    }
    /* Failed, not eligible: each its own group and label. */
    for (int i = 0; i < f->nother; i++, n++) {
        entry *e = &f->stream[n];
        e->kind = K_OTHER;
        rt_ch_slugid(e->task_id);
        char group[23], label[256];
        rt_ch_slugid(group);
        snprintf(label, sizeof label, "%s-other-%s-%d", GWX_LABEL, group, i);
        json_t *def = NULL;
        const char *errorsummary = ES_FAIL;
        switch (i % 5) {
        case 0: def = rt_ch_task_definition(DEC_FIX, group, NULL); break; /* a build */
        case 1: def = test_definition(group, label, UNLIMITED, 3); break;
        case 2: def = test_definition(group, label, UNLIMITED, 0); break; /* other pool */
        case 3:
            def = test_definition(group, label, UNLIMITED, 0);
            errorsummary = ES_INFRA;
            break;
        default:
            def = test_definition(group, label, UNLIMITED, 0);
            errorsummary = ES_PASS;
            break;
        }
        json_object_set_new(json_object_get(s, "tasks"), e->task_id, def);
        add_artifacts(s, e->task_id, errorsummary);
        failed_body(e, group, GWX_ROUTE);
        e->history = i % 5 != 0; /* every test run, whatever its eligibility */
        e->history_es = errorsummary;
        if (i % 5 == 2) {
            json_t *doc = json_loads(e->body, 0, NULL);
            free(e->body);
            json_t *st = json_object_get(doc, "status");
            json_object_set_new(st, "provisionerId", json_string("proj-fuzzing"));
            json_object_set_new(st, "workerType", json_string("linux-pool10"));
            set_body(e, doc);
        }
        if (i % 20 == 19) load(h, &s);
    }
    load(h, &s);
    /* Completed and exception runs of the recordings, with what retrig-history reads: a
     * GWxTc8p run is a test with a passing errorsummary, a B3EheQ run a test without one
     * (recorded with no groups), a fuzzmanager run a build (not recorded). */
    json_t *bodies[4] = {json_fixture_body(GWX_PULSE), json_fixture_body(B3E_PULSE),
                         json_fixture_body(FUZZ_DONE), json_fixture_body(FUZZ_EXC)};
    const char *routes[4] = {GWX_ROUTE, B3E_ROUTE, NULL, NULL};
    for (int i = 0; n < f->nmessages; i++, n++) {
        entry *e = &f->stream[n];
        int which = i % 7 == 6 ? 3 : i % 3;
        e->kind = which == 3 ? K_EXCEPTION : K_COMPLETED;
        e->event = which == 3 ? "task-exception" : "task-completed";
        e->route = routes[which];
        rt_ch_slugid(e->task_id);
        json_object_set_new(json_object_get(bodies[which], "status"), "taskId",
                            json_string(e->task_id));
        set_body(e, json_incref(bodies[which]));
        if (which == 3) continue;
        static const char *const defs[3] = {GWX_DEF, B3E_DEF, DEC_FIX};
        json_object_set_new(json_object_get(s, "tasks"), e->task_id,
                            json_pack("{s:s}", "fixture", defs[which]));
        add_artifacts(s, e->task_id, which == 0 ? ES_PASS : NULL);
        e->history = which != 2;
        e->history_es = which == 0 ? ES_PASS : NULL;
        if (i % 100 == 99) load(h, &s);
    }
    load(h, &s);
    json_decref(s);
    for (int i = 0; i < 4; i++) json_decref(bodies[i]);
    /* Shuffled, then named. */
    for (size_t i = f->nmessages - 1; i > 0; i--) {
        size_t j = (size_t)random() % (i + 1);
        entry t = f->stream[i];
        f->stream[i] = f->stream[j];
        f->stream[j] = t;
    }
    for (size_t i = 0; i < f->nmessages; i++)
        snprintf(f->stream[i].message_id, sizeof f->stream[i].message_id, "%s-%zu",
                 f->stream[i].kind == K_MALFORMED ? "malformed" : f->tag, i);
}

static void publish_some(rt_stream *f, size_t count)
{
    for (size_t k = 0; k < count && f->published < f->nmessages; k++, f->published++) {
        entry *e = &f->stream[f->published];
        rt_ch_publish(f->h, e->event, e->body, e->len, e->route, e->message_id);
    }
}

/* ---- Taskcluster's part ---- */

static failure *failure_by_label(rt_stream *f, const char *label)
{
    for (int i = 0; label && i < f->neligible; i++)
        if (!strcmp(f->fails[i].label, label)) return &f->fails[i];
    return NULL;
}

static void trigger_requests(json_t *trigger, void (*fn)(void *, const char *, int), void *arg)
{
    json_t *input =
        json_object_get(json_object_get(json_object_get(trigger, "payload"), "user"), "input");
    size_t i, k;
    json_t *r, *t;
    json_array_foreach(json_object_get(input, "requests"), i, r)
    {
        json_t *times = json_object_get(r, "times");
        json_array_foreach(json_object_get(r, "tasks"), k, t)
            fn(arg, json_string_value(t), times ? (int)json_integer_value(times) : 1);
    }
}

/* One retriggered run resolves: its task (and job when it fails) in the fake, then its
 * Pulse message. */
static void resolve_retrigger(rt_stream *f, const failure *x, bool reproduces)
{
    rt_ch *h = f->h;
    assert_true(f->nplayed < f->max_played);
    char *task_id = f->played_ids[f->nplayed++];
    rt_ch_slugid(task_id);
    json_t *s = scenario_new();
    json_object_set_new(json_object_get(s, "tasks"), task_id, failure_definition(f, x));
    f->played_es[f->nplayed - 1] = reproduces ? ES_FAIL : ES_PASS;
    add_artifacts(s, task_id, f->played_es[f->nplayed - 1]);
    if (reproduces) add_job(s, task_id);
    rt_ch_scenario(h, s);
    json_decref(s);
    json_t *body = NULL;
    if (reproduces) {
        char *text = rt_test_failed_variant(GWX_PULSE, 1);
        body = json_loads(text, 0, NULL);
        free(text);
    } else {
        body = json_fixture_body(GWX_PULSE);
    }
    assert_non_null(body);
    json_t *status = json_object_get(body, "status");
    json_object_set_new(status, "taskId", json_string(task_id));
    json_object_set_new(status, "taskGroupId", json_string(x->group));
    json_object_set_new(body, "task", json_pack("{s:{s:s}}", "tags", "label", x->label));
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char message_id[40];
    snprintf(message_id, sizeof message_id, "played-%zu", f->nplayed);
    rt_ch_publish(h, reproduces ? "task-failed" : "task-completed", text, strlen(text),
                  route_of(f, x->push), message_id);
    free(text);
}

static void play_request(void *arg, const char *label, int times)
{
    rt_stream *f = arg;
    failure *x = failure_by_label(f, label);
    if (!x) return; /* counted as a duplicate at the end */
    for (int n = 0; n < times && x->played < f->runs_cap; n++) {
        resolve_retrigger(f, x, !x->intermittent || x->played == 0);
        x->played++;
    }
}

static void play_triggers(rt_stream *f)
{
    json_t *triggers = rt_fake_triggers(&f->h->fake);
    assert_non_null(triggers);
    for (; f->triggers_played < json_array_size(triggers); f->triggers_played++)
        trigger_requests(json_array_get(triggers, f->triggers_played), play_request, f);
    json_decref(triggers);
}

static void start_replicas(rt_stream *f)
{
    rt_ch_start_workers(f->h, f->replicas.classify);
    rt_ch_start_program(f->h, "retrig-retrigger", f->replicas.retrigger);
    rt_ch_start_program(f->h, "retrig-decide", f->replicas.decide);
    rt_ch_start_program(f->h, "retrig-history", f->replicas.history);
}

/* retrig-history's Pulse queue, bound as the worker binds it, so that it gets the whole
 * stream even before a history worker runs. */
static void declare_history_queue(rt_ch *h)
{
    char q[256];
    snprintf(q, sizeof q, "%s-history", h->pulse_queue);
    if (rt_amqp_declare_queue(h->amqp, q, NULL) != RT_OK)
        fail_msg("declare %s: %s", q, rt_amqp_errstr(h->amqp));
    static const char *const events[] = {"task-completed", "task-failed"};
    for (size_t i = 0; i < 2; i++) {
        char exchange[256];
        snprintf(exchange, sizeof exchange, "%s%s", h->exchange_prefix, events[i]);
        if (rt_amqp_bind_queue(h->amqp, q, exchange, "#") != RT_OK)
            fail_msg("bind %s: %s", q, rt_amqp_errstr(h->amqp));
    }
}

/* The limited platform's Redis counter, tolerating a Redis being restarted. */
static void sample_counter(rt_stream *f)
{
    rt_ch *h = f->h;
    char key[512];
    snprintf(key, sizeof key, "%sbudget:%s:%s", h->redis_prefix, RT_STREAM_LIMITED, rt_ch_today());
    const char *argv[] = {"GET", key};
    redisReply *reply = NULL;
    if (rt_redis_command_argv(h->redis, 2, argv, NULL, &reply) != RT_OK) return;
    if (reply->type == REDIS_REPLY_STRING && atoi(reply->str) > f->max_counter)
        f->max_counter = atoi(reply->str);
    freeReplyObject(reply);
}

/* A Postgres text array literal of task ids (slugids need no quoting). */
static char *id_array(const entry *stream, size_t n, kind only, bool all_but, char (*extra)[23],
                      size_t nextra)
{
    size_t size = 3 + (n + nextra) * 24;
    char *out = malloc(size), *p = out;
    assert_non_null(out);
    *p++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (all_but ? stream[i].kind == only : stream[i].kind != only) continue;
        p += sprintf(p, "%s%s", p - out > 1 ? "," : "", stream[i].task_id);
    }
    for (size_t i = 0; i < nextra; i++) p += sprintf(p, "%s%s", p - out > 1 ? "," : "", extra[i]);
    *p++ = '}';
    *p = '\0';
    return out;
}

static long long count_in(rt_ch *h, const char *sql, const char *ids)
{
    const char *params[] = {ids};
    return rt_ch_sql_int(h, sql, 1, params);
}

/* Every eligible failure has its verdict and every set its decision. */
static bool settled(rt_stream *f, const char *eligible_ids)
{
    rt_ch *h = f->h;
    return count_in(
               h,
               "SELECT count(*) FROM runs WHERE task_id = ANY($1::text[]) AND verdict IS NOT NULL",
               eligible_ids) == f->neligible &&
           rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_sets WHERE status <> 'decided'", 0,
                         NULL) == 0;
}

static unsigned depth_or_zero(rt_ch *h, const char *queue)
{
    uint32_t n = 0;
    if (rt_amqp_queue_depth(h->amqp, queue, &n) != RT_OK) return 0;
    return n;
}

/* Messages ready in every queue of the pipeline (delay queues included). */
static unsigned pending(rt_ch *h)
{
    static const char *const suffixes[] = {"retrigger",
                                           "decide",
                                           "classify-retry",
                                           "classify-retry.delay.300",
                                           "classify-retry.delay.600",
                                           "retrigger.delay.300",
                                           "retrigger.delay.600",
                                           "decide.delay.200",
                                           "decide.delay.400",
                                           "decide.delay.800",
                                           "decide.delay.1600",
                                           "history-retry",
                                           "history-retry.delay.300",
                                           "history-retry.delay.600"};
    char history_queue[256];
    snprintf(history_queue, sizeof history_queue, "%s-history", h->pulse_queue);
    unsigned total = depth_or_zero(h, h->pulse_queue) + depth_or_zero(h, history_queue);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char q[256];
        snprintf(q, sizeof q, "%s.%s", h->ns, suffixes[i]);
        total += depth_or_zero(h, q);
    }
    return total;
}

/* ---- the verdict ---- */

static void count_trigger(void *arg, const char *label, int times)
{
    rt_stream *f = ((void **)arg)[0];
    rt_stream_tally *t = ((void **)arg)[1];
    (void)times;
    failure *x = failure_by_label(f, label);
    if (x)
        x->triggers++;
    else
        t->duplicated++, fprintf(stderr, "%s: a trigger for an unknown label %s\n", f->tag, label);
}

static void check_sets_and_triggers(rt_stream *f, rt_stream_tally *t, int *exhausted)
{
    rt_ch *h = f->h;
    PGresult *res = NULL;
    /* The rounds made of each set: its first (retrig-classify's, when it asked any) and
     * every later one the budget granted; each is one hook trigger. */
    if (rt_pg_exec(h->pg,
                   "SELECT s.label, s.original_task_id, (s.retrigger_count > 0)::integer +"
                   " (SELECT count(*) FROM retrigger_rounds r WHERE r.set_id = s.id"
                   " AND NOT r.refused) FROM retrigger_sets s",
                   0, NULL, &res) != RT_OK)
        fail_msg("sets: %s", rt_pg_errstr(h->pg));
    for (int r = 0; r < PQntuples(res); r++) {
        failure *x = failure_by_label(f, PQgetvalue(res, r, 0));
        if (x && !strcmp(x->task_id, PQgetvalue(res, r, 1))) {
            x->sets++;
            x->rounds = atoi(PQgetvalue(res, r, 2));
        } else {
            t->duplicated++;
            fprintf(stderr, "%s: a set for %s (original %s) that no eligible failure owns\n",
                    f->tag, PQgetvalue(res, r, 0), PQgetvalue(res, r, 1));
        }
    }
    PQclear(res);
    json_t *triggers = rt_fake_triggers(&h->fake);
    assert_non_null(triggers);
    void *arg[] = {f, t};
    size_t i;
    json_t *tr;
    json_array_foreach(triggers, i, tr) trigger_requests(tr, count_trigger, arg);
    json_decref(triggers);
    for (int k = 0; k < f->neligible; k++) {
        failure *x = &f->fails[k];
        if (x->sets == 0) {
            char run_verdict[128];
            snprintf(run_verdict, sizeof run_verdict, "%s", rt_ch_verdict(h, x->task_id, 0));
            if (x->limited && !strcmp(run_verdict, "skip/budget-exhausted")) {
                (*exhausted)++;
            } else {
                t->lost++;
                fprintf(stderr, "%s: eligible failure %s has no set (verdict '%s')\n", f->tag,
                        x->task_id, run_verdict);
            }
        }
        if (x->sets > 1) t->duplicated += x->sets - 1;
        if (f->configs && x->sets == 1) {
            /* Pooled: a trigger per round the pooled set made of it, none, one or more. */
            if (x->triggers < x->rounds) {
                t->lost += x->rounds - x->triggers;
                fprintf(stderr, "%s: the set of %s made %d rounds, triggered %d times\n", f->tag,
                        x->task_id, x->rounds, x->triggers);
            } else if (x->triggers > x->rounds) {
                t->duplicated += x->triggers - x->rounds;
                fprintf(stderr, "%s: the set of %s made %d rounds, triggered %d times\n", f->tag,
                        x->task_id, x->rounds, x->triggers);
            }
            continue;
        }
        if (x->sets >= 1 && x->triggers == 0) {
            t->lost++;
            fprintf(stderr, "%s: the set of %s was never triggered\n", f->tag, x->task_id);
        }
        if (x->triggers > 1) {
            t->duplicated += x->triggers - 1;
            fprintf(stderr, "%s: the set of %s was triggered %d times\n", f->tag, x->task_id,
                    x->triggers);
        }
        if (x->sets == 0 && x->triggers > 0) t->duplicated += x->triggers;
    }
}

static void check_decisions(rt_stream *f, rt_stream_tally *t)
{
    rt_ch *h = f->h;
    long long missing = rt_ch_sql_int(h,
                                      "SELECT count(*) FROM retrigger_sets s WHERE NOT EXISTS"
                                      " (SELECT 1 FROM decisions d WHERE d.set_id = s.id"
                                      " AND (d.verdict <> 'undecided' OR d.reason <> ''))",
                                      0, NULL);
    if (missing) fprintf(stderr, "%s: %lld sets without a decision\n", f->tag, missing);
    t->lost += missing;
    /* decisions.set_id is the primary key: a second decision cannot exist; the sets'
     * status must agree with their decision. */
    long long not_decided =
        rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_sets WHERE status <> 'decided'", 0, NULL);
    if (not_decided) fprintf(stderr, "%s: %lld sets not marked decided\n", f->tag, not_decided);
    t->lost += not_decided;
}

/* Pooled: every set a member of its push's one pooled set, decided once, every member's
 * decision pointing at it with its verdict. */
static void check_pooled(rt_stream *f, rt_stream_tally *t)
{
    rt_ch *h = f->h;
    static const struct {
        const char *what, *sql;
        bool lost;
    } checks[] = {
        {"sets in no pooled set",
         "SELECT count(*) FROM retrigger_sets s WHERE NOT EXISTS (SELECT 1 FROM"
         " pooled_set_members m WHERE m.set_id = s.id)",
         true},
        {"pushes with sets but no pooled set",
         "SELECT count(DISTINCT s.revision) FROM retrigger_sets s WHERE NOT EXISTS (SELECT 1"
         " FROM pooled_sets p WHERE p.project = s.project AND p.revision = s.revision)",
         true},
        {"pooled sets beyond one per push (the stream fails one test)",
         "SELECT count(*) - count(DISTINCT (project, revision)) FROM pooled_sets", false},
        {"pooled sets without a member",
         "SELECT count(*) FROM pooled_sets p WHERE NOT EXISTS (SELECT 1 FROM pooled_set_members"
         " m WHERE m.pool_id = p.id)",
         false},
        {"pooled sets not decided",
         "SELECT count(*) FROM pooled_sets WHERE state <> 'decided' OR verdict IS NULL", true},
        {"members whose decision does not point at their pooled set",
         "SELECT count(*) FROM pooled_set_members m LEFT JOIN decisions d ON d.set_id ="
         " m.set_id WHERE d.pool_id IS DISTINCT FROM m.pool_id",
         true},
        {"decisions whose verdict is not their pooled set's",
         "SELECT count(*) FROM decisions d JOIN pooled_sets p ON p.id = d.pool_id"
         " WHERE d.verdict <> p.verdict",
         false},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        long long n = rt_ch_sql_int(h, checks[i].sql, 0, NULL);
        if (!n) continue;
        fprintf(stderr, "%s: %lld %s\n", f->tag, n, checks[i].what);
        if (checks[i].lost)
            t->lost += n;
        else
            t->duplicated += n;
    }
    fprintf(
        stderr,
        "%s: %lld pooled sets (%lld regression, %lld decided with no round), %lld rounds"
        " (%lld refused)\n",
        f->tag, rt_ch_sql_int(h, "SELECT count(*) FROM pooled_sets", 0, NULL),
        rt_ch_sql_int(h, "SELECT count(*) FROM pooled_sets WHERE verdict = 'regression'", 0, NULL),
        rt_ch_sql_int(h, "SELECT count(*) FROM pooled_sets WHERE rounds = 0", 0, NULL),
        rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_rounds", 0, NULL),
        rt_ch_sql_int(h, "SELECT count(*) FROM retrigger_rounds WHERE refused", 0, NULL));
}

/* Takes every dead letter (with its source queue, which rt_ch_take does not keep). */
static void check_dead_letters(rt_stream *f, rt_stream_tally *t)
{
    rt_ch *h = f->h;
    unsigned n = rt_ch_queue_depth(h, "dead-letter");
    char dlq[256], history_queue[256];
    snprintf(dlq, sizeof dlq, "%s.dead-letter", h->ns);
    snprintf(history_queue, sizeof history_queue, "%s-history", h->pulse_queue);
    if (n && !h->consuming[1]) {
        if (rt_amqp_consume(h->amqp, dlq) != RT_OK)
            fail_msg("consume %s: %s", dlq, rt_amqp_errstr(h->amqp));
        h->consuming[1] = true;
    }
    int64_t deadline = rt_test_now_ms() + 10000;
    unsigned got = 0;
    while (got < n && rt_test_now_ms() < deadline) {
        rt_amqp_message m = {0};
        if (rt_amqp_next(h->amqp, &m, 100) != RT_OK) continue;
        if (strcmp(m.queue, dlq) != 0)
            fail_msg("a message from %s while taking dead letters", m.queue);
        got++;
        const char *reason = rt_amqp_message_header(&m, "x-retrig-reason");
        const char *source = rt_amqp_message_header(&m, "x-retrig-source-queue");
        int consumer = !source                           ? -1
                       : !strcmp(source, h->pulse_queue) ? 0
                       : !strcmp(source, history_queue)  ? 1
                                                         : -1;
        entry *e = NULL;
        for (size_t k = 0; m.message_id && k < f->nmessages; k++)
            if (!strcmp(f->stream[k].message_id, m.message_id)) e = &f->stream[k];
        if (!e || e->kind != K_MALFORMED || consumer < 0) {
            t->duplicated++;
            fprintf(stderr, "%s: dead letter %s from %s (%s) is not a malformed message\n", f->tag,
                    m.message_id ? m.message_id : "(no id)", source ? source : "(no source)",
                    reason ? reason : "no reason");
        } else if (!reason || strncmp(reason, e->reason_prefix, strlen(e->reason_prefix))) {
            fprintf(stderr, "%s: dead letter %s from %s: reason '%s', expected '%s...'\n", f->tag,
                    e->message_id, source, reason ? reason : "", e->reason_prefix);
            /* not counted as found: lost below */
        } else if (++e->dead_letters[consumer] > 1) {
            t->duplicated++;
            fprintf(stderr, "%s: a second copy of %s from %s in the dead-letter queue\n", f->tag,
                    e->message_id, source);
        }
        if (rt_amqp_ack(h->amqp, &m) != RT_OK) fail_msg("ack: %s", rt_amqp_errstr(h->amqp));
        rt_amqp_message_free(&m);
    }
    if (got < n) fail_msg("only %u of %u dead letters arrived", got, n);
    fprintf(stderr, "%s: %u dead letters\n", f->tag, n);
    for (size_t k = 0; k < f->nmessages; k++) {
        for (int c = 0; f->stream[k].kind == K_MALFORMED && c < 2; c++) {
            if (f->stream[k].dead_letters[c] == 0) {
                t->lost++;
                fprintf(stderr, "%s: %s is not in the dead-letter queue from %s\n", f->tag,
                        f->stream[k].message_id, c ? history_queue : h->pulse_queue);
            }
        }
    }
}

/* The groups and failing tests retrig-history records for an errorsummary fixture. */
static void history_rows_of(const char *errorsummary, long long *groups, long long *tests)
{
    *groups = *tests = 0;
    if (!errorsummary) return;
    size_t len = 0;
    char *text = rt_test_read_file(rt_test_fixture(errorsummary), &len);
    assert_non_null(text);
    rt_errorsummary es = {0};
    rt_history_rows rows = {0};
    assert_int_equal(rt_errorsummary_add(&es, text, len), RT_OK);
    assert_int_equal(rt_history_rows_from_errorsummary(&es, &rows), RT_OK);
    *groups = (long long)rows.ngroups;
    *tests = (long long)rows.ntests;
    rt_history_rows_free(&rows);
    rt_errorsummary_free(&es);
    free(text);
}

/* Every test run of the stream and every played run has one history run with the groups
 * and failing tests of its errorsummary; nothing else is recorded. */
static void check_history(rt_stream *f, rt_stream_tally *t)
{
    rt_ch *h = f->h;
    PGresult *res = NULL;
    if (rt_pg_exec(h->pg,
                   "SELECT split_part(r.run_key, '/', 1),"
                   " (SELECT count(*) FROM history_groups g WHERE g.run_id = r.id),"
                   " (SELECT count(*) FROM history_tests x WHERE x.run_id = r.id)"
                   " FROM history_runs r",
                   0, NULL, &res) != RT_OK)
        fail_msg("history runs: %s", rt_pg_errstr(h->pg));
    static const char *const fixtures[] = {ES_FAIL, ES_PASS, ES_INFRA, NULL};
    long long groups[4], tests[4];
    for (int i = 0; i < 4; i++) history_rows_of(fixtures[i], &groups[i], &tests[i]);
    for (int r = 0; r < PQntuples(res); r++) {
        const char *task_id = PQgetvalue(res, r, 0);
        const char *es = NULL;
        int *found = NULL;
        for (size_t k = 0; !found && k < f->nmessages; k++) {
            if (f->stream[k].history && !strcmp(f->stream[k].task_id, task_id)) {
                found = &f->stream[k].history_runs;
                es = f->stream[k].history_es;
            }
        }
        for (size_t k = 0; !found && k < f->nplayed; k++) {
            if (!strcmp(f->played_ids[k], task_id)) {
                found = &f->played_history[k];
                es = f->played_es[k];
            }
        }
        if (!found) {
            t->duplicated++;
            fprintf(stderr, "%s: history recorded %s, which is no test run\n", f->tag, task_id);
            continue;
        }
        if (++*found > 1) {
            t->duplicated++;
            fprintf(stderr, "%s: history recorded %s %d times\n", f->tag, task_id, *found);
        }
        int which = 0;
        while (fixtures[which] && (!es || strcmp(fixtures[which], es))) which++;
        long long ng = atoll(PQgetvalue(res, r, 1)), nt = atoll(PQgetvalue(res, r, 2));
        if (ng != groups[which] || nt != tests[which]) {
            fprintf(stderr,
                    "%s: history run of %s has %lld groups and %lld tests, expected %lld and"
                    " %lld\n",
                    f->tag, task_id, ng, nt, groups[which], tests[which]);
            if (ng < groups[which] || nt < tests[which])
                t->lost++;
            else
                t->duplicated++;
        }
    }
    PQclear(res);
    long long missing = 0;
    for (size_t k = 0; k < f->nmessages; k++)
        if (f->stream[k].history && f->stream[k].history_runs == 0) missing++;
    for (size_t k = 0; k < f->nplayed; k++)
        if (f->played_history[k] == 0) missing++;
    if (missing) fprintf(stderr, "%s: %lld test runs missing from the history\n", f->tag, missing);
    t->lost += missing;
    fprintf(stderr,
            "%s: history: %lld runs, %lld groups, %lld failing tests recorded (groups per"
            " errorsummary: fail %lld, pass %lld, infra %lld)\n",
            f->tag, rt_ch_sql_int(h, "SELECT count(*) FROM history_runs", 0, NULL),
            rt_ch_sql_int(h, "SELECT count(*) FROM history_groups", 0, NULL),
            rt_ch_sql_int(h, "SELECT count(*) FROM history_tests", 0, NULL), groups[0], groups[1],
            groups[2]);
}

static void check_runs(rt_stream *f, rt_stream_tally *t)
{
    rt_ch *h = f->h;
    char *ids = id_array(f->stream, f->nmessages, K_MALFORMED, true, f->played_ids, f->nplayed);
    long long expected = (long long)(f->nmessages - f->nmalformed + f->nplayed);
    long long recorded =
        count_in(h, "SELECT count(*) FROM runs WHERE task_id = ANY($1::text[])", ids);
    free(ids);
    if (recorded != expected)
        fprintf(stderr, "%s: %lld of %lld valid runs recorded\n", f->tag, recorded, expected);
    if (recorded < expected) t->lost += expected - recorded;
    /* No failure that is not eligible got a set. */
    ids = id_array(f->stream, f->nmessages, K_OTHER, false, NULL, 0);
    long long wrong = count_in(
        h, "SELECT count(*) FROM retrigger_sets WHERE original_task_id = ANY($1::text[])", ids);
    free(ids);
    if (wrong) fprintf(stderr, "%s: %lld sets for failures that are not eligible\n", f->tag, wrong);
    /* (these sets were already counted as unowned in check_sets_and_triggers) */
}

/* ---- the tests' calls ---- */

void rt_stream_start(rt_stream *f)
{
    build_stream(f);
    rt_ch_declare_pulse(f->h);
    declare_history_queue(f->h);
    start_replicas(f);
    f->eligible_ids = id_array(f->stream, f->nmessages, K_ELIGIBLE, false, NULL, 0);
}

void rt_stream_round(rt_stream *f, size_t count)
{
    publish_some(f, count);
    play_triggers(f);
    sample_counter(f);
    f->respawns += (long)rt_ch_respawn_exited(f->h);
}

bool rt_stream_settled(rt_stream *f)
{
    return f->published == f->nmessages && settled(f, f->eligible_ids);
}

void rt_stream_drain(rt_stream *f, int64_t deadline_ms)
{
    for (int rounds = 0;; rounds++) {
        int quiet = 0;
        while (quiet < 5 && rt_test_now_ms() < deadline_ms) {
            play_triggers(f);
            quiet = pending(f->h) == 0 ? quiet + 1 : 0;
            rt_stream_sleep_ms(100);
        }
        assert_int_equal(rt_ch_stop_workers(f->h, 15000), 0);
        if (pending(f->h) == 0) break;
        if (rt_test_now_ms() > deadline_ms || rounds > 20) fail_msg("queues not drained in time");
        start_replicas(f);
    }
}

void rt_stream_check(rt_stream *f, rt_stream_tally *t)
{
    *t = (rt_stream_tally){0};
    check_sets_and_triggers(f, t, &t->exhausted);
    check_decisions(f, t);
    if (f->configs) check_pooled(f, t);
    check_dead_letters(f, t);
    check_runs(f, t);
    check_history(f, t);
}

size_t rt_stream_published(const rt_stream *f) { return f->published; }
size_t rt_stream_played(const rt_stream *f) { return f->nplayed; }
long rt_stream_respawns(const rt_stream *f) { return f->respawns; }
int rt_stream_max_counter(const rt_stream *f) { return f->max_counter; }

static void add_times(void *arg, const char *label, int times)
{
    (void)label;
    *(long long *)arg += times;
}

long long rt_stream_hook_times(rt_stream *f)
{
    json_t *triggers = rt_fake_triggers(&f->h->fake);
    assert_non_null(triggers);
    long long times = 0;
    size_t i;
    json_t *tr;
    json_array_foreach(triggers, i, tr) trigger_requests(tr, add_times, &times);
    json_decref(triggers);
    return times;
}

long long rt_stream_ledger(rt_stream *f)
{
    const char *params[] = {RT_STREAM_LIMITED};
    return rt_ch_sql_int(f->h,
                         "SELECT coalesce(max(s), 0) FROM (SELECT sum(amount) AS s"
                         " FROM budget_ledger WHERE platform = $1 GROUP BY day) d",
                         1, params);
}
