/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-classify: from Taskcluster task-* Pulse messages to retrigger requests.
 *
 * For each message: validate it (bad ones go to the dead-letter queue with a reason),
 * record the run, then run the pure eligibility checks (common/core/eligibility.h), fetching
 * only what the next check needs (task definition, set lookup, Treeherder classification,
 * errorsummary artifacts, existing retriggers). An eligible failure claims its set and its
 * budget atomically in Redis, then in one Postgres call (classify_create_set, migration
 * 0012) creates the set (the unique constraint is the backstop when Redis was flushed), runs
 * the ledger backstop and writes the ledger row; then, under the set's row lock, publishes
 * the retrigger request with a confirm and marks it published; the order of those steps and
 * what each failure leads to is common/core/claim_flow.h's (rt_claim_flow_next), which
 * request_retriggers performs. The statements on runs, sets, their members and ledger rows
 * are common/store/runs.h's and sets.h's (moved there from this file, issue 33). The Pulse message
 * is acked only after that. Transient upstream failures go through delay queues; after the last
 * delay the message is dead-lettered. With decide_policy = adaptive, the set's first round asks for
 * the verdict model's first batch (common/core/decide_rounds.h: from the history of the failing
 * tests, within budget_minimum and retriggers_per_failure) instead of
 * retriggers_per_failure; retrig-decide asks for the later rounds. classify_concurrency lanes
 * (threads) in one process each run this whole loop with their own connections, like replicas; run
 * replicas for more. */
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/core/claim_flow.h"
#include "common/core/decide_rounds.h"
#include "common/core/eligibility.h"
#include "common/core/errorsummary.h"
#include "common/core/evidence.h"
#include "common/core/ids.h"
#include "common/core/messages.h"
#include "common/core/pulse.h"
#include "common/core/retrigger_set.h"
#include "common/core/taskdef.h"
#include "common/core/utf8.h"
#include "common/io/amqp.h"
#include "common/io/budget.h"
#include "common/io/deadline.h"
#include "common/io/hashkey.h"
#include "common/io/history_store.h"
#include "common/io/http.h"
#include "common/io/metrics.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "common/io/run_fetch.h"
#include "common/io/stop.h"
#include "common/io/upstream.h"
#include "common/options.h"
#include "common/policy.h"
#include "common/store/ledger.h"
#include "common/store/runs.h"
#include "common/store/sets.h"
#include "common/worker.h"

#define MAX_DELAYS 16
#define MAX_FOUND  32 /* runs of a label already on a push kept as members */

/* Listings of one task group are taken one at a time (a failure's retriggers are counted
 * while its siblings are, and each listing is up to 1,000 pages): a lane that needs a group
 * being listed waits until that listing ends, then lists its own label (the failures of one
 * group are of different labels: one listing's runs are not another's). No lock is held
 * across the network: the table of groups being listed is locked only to look at it and
 * change it, so the listings of other groups go on in parallel, a slow one stalling no other
 * group. A lane lists one group at a time, so the table has a place for each lane
 * (classify_concurrency <= 64). */
#define GROUP_LISTINGS 64
static pthread_mutex_t g_listings_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_listing_done = PTHREAD_COND_INITIALIZER;
static struct {
    bool used;
    char task_group_id[23];
} g_listings[GROUP_LISTINGS]; /* the groups being listed */

/* Waits until no other lane lists the group, then marks it listed; returns its place. */
static size_t group_listing_begin(const char *task_group_id)
{
    size_t place;
    pthread_mutex_lock(&g_listings_lock);
    for (;;) {
        bool busy = false;
        place = GROUP_LISTINGS;
        for (size_t i = 0; i < GROUP_LISTINGS; i++) {
            if (!g_listings[i].used)
                place = place < GROUP_LISTINGS ? place : i;
            else if (!strcmp(g_listings[i].task_group_id, task_group_id))
                busy = true;
        }
        if (!busy && place < GROUP_LISTINGS) break;
        pthread_cond_wait(&g_listing_done, &g_listings_lock);
    }
    g_listings[place].used = true;
    snprintf(g_listings[place].task_group_id, sizeof g_listings[place].task_group_id, "%s",
             task_group_id);
    pthread_mutex_unlock(&g_listings_lock);
    return place;
}

static void group_listing_end(size_t place)
{
    pthread_mutex_lock(&g_listings_lock);
    g_listings[place].used = false;
    pthread_cond_broadcast(&g_listing_done);
    pthread_mutex_unlock(&g_listings_lock);
}

typedef struct cached_task {
    char task_id[23];
    rt_taskdef def;
} cached_task;

typedef struct snapshot snapshot;

typedef struct classify {
    rt_config *cfg; /* snap's configuration: read once per batch */
    snapshot *snap; /* held from one safe point to the next */
    unsigned snap_generation;
    rt_worker_conns conns;
    rt_worker_settler settler;
    size_t lane, lanes; /* this lane's number, and how many there are */
    rt_amqp *pulse;     /* consumes the Pulse queue */
    rt_amqp *ours;      /* our broker: requests, retries, dead letters (== pulse when same URL) */
    rt_redis *redis;
    rt_pg *pg;
    rt_http *http;
    rt_elig_policy policy;
    char pulse_queue[300];
    char retry_queue[300];
    char request_queue[300];
    char request_key[32];
    int delays[MAX_DELAYS];
    size_t ndelays;
    cached_task *cache;
    size_t cache_size;
    rt_tc_run found[MAX_FOUND]; /* the message in hand's runs already on its push */
    size_t nfound;
} classify;

/* What handling one message came to. */
/* ---- the task definition cache (direct-mapped: definitions never change) ---- */

static size_t cache_slot(const classify *w, const char *task_id)
{
    size_t h = 5381;
    for (const char *p = task_id; *p; p++) h = h * 33 + (unsigned char)*p;
    return h % w->cache_size;
}

static const rt_taskdef *cache_get(classify *w, const char *task_id)
{
    if (!w->cache_size) return NULL;
    cached_task *c = &w->cache[cache_slot(w, task_id)];
    return strcmp(c->task_id, task_id) == 0 ? &c->def : NULL;
}

/* Takes ownership of def's contents. Returns where it lives now (or def when not cached). */
static const rt_taskdef *cache_put(classify *w, const char *task_id, rt_taskdef *def)
{
    if (!w->cache_size) return def;
    cached_task *c = &w->cache[cache_slot(w, task_id)];
    rt_taskdef_free(&c->def);
    snprintf(c->task_id, sizeof c->task_id, "%s", task_id);
    c->def = *def;
    memset(def, 0, sizeof *def);
    return &c->def;
}

/* ---- small helpers ---- */

/* Maps an upstream failure: transient -> retry later; anything else -> dead letter. */
static int record_verdict(classify *w, const rt_pulse_task *msg, const char *verdict,
                          const char *reason)
{
    return rt_runs_set_verdict(w->pg, msg->task_id, msg->run_id, verdict, reason);
}

static const char *member_state(const rt_pulse_task *msg)
{
    return rt_member_state_name(rt_member_state_of_event(msg->event));
}

/* What rt_sets_run_facts read along with the run's details (common/store/sets.h). */
typedef struct run_facts {
    bool known;
    long long set_id; /* 0: no set */
    char original[23];
    bool published;
    char day[11]; /* the UTC day ledger_spent is for */
    int ledger_spent;
} run_facts;

static int read_run_facts(classify *w, const rt_pulse_task *msg, const rt_taskdef *task,
                          run_facts *f)
{
    rt_worker_utc_day(f->day);
    rt_sets_run_facts_query q = {.task_id = msg->task_id,
                                 .run_id = msg->run_id,
                                 .project = task->project ? task->project : msg->project,
                                 .revision = task->revision ? task->revision : msg->revision,
                                 .label = task->label,
                                 .platform = task->platform,
                                 .set_project = task->project,
                                 .set_revision = task->revision,
                                 .set_label = task->label,
                                 .ledger_platform = task->platform ? task->platform : "unknown",
                                 .day = f->day};
    rt_set_ref set;
    int rc = rt_sets_run_facts(w->pg, &q, &set, &f->ledger_spent);
    if (rc != RT_OK) return rc;
    f->set_id = set.id;
    snprintf(f->original, sizeof f->original, "%s", set.original_task_id);
    f->published = set.published;
    f->known = true;
    return RT_OK;
}

/* Looks up the set of (project, revision, label). *set_id 0 when none. */
static int find_set(classify *w, const char *project, const char *revision, const char *label,
                    long long *set_id, char original[23], bool *published)
{
    rt_set_ref set;
    int rc = rt_sets_find(w->pg, project, revision, label, &set);
    if (rc != RT_OK) return rc;
    *set_id = set.id;
    snprintf(original, 23, "%s", set.original_task_id);
    *published = set.published;
    return RT_OK;
}

static int add_member(classify *w, long long set_id, const rt_pulse_task *msg)
{
    rt_set_member member = {.set_id = set_id,
                            .task_id = msg->task_id,
                            .run_id = msg->run_id,
                            .role = "retrigger",
                            .state = member_state(msg),
                            .resolved_at = msg->resolved};
    return rt_sets_add_member(w->pg, &member);
}

/* A member of set_id resolved: ask retrig-decide to look (it decides as soon as the verdict
 * cannot change), and mark the set complete when every requested retrigger has resolved.
 * The set row is locked so that concurrent replicas publish "set-complete" once. */
static int request_decision(classify *w, long long set_id, const char *task_id)
{
    rt_set_progress set;
    bool found = false;
    int resolved = 0;
    int rc = rt_pg_begin(w->pg);
    if (rc != RT_OK) return rc;
    rc = rt_sets_lock_progress(w->pg, set_id, &set, &found);
    /* Not found, complete or decided already: nothing new to say. */
    if (rc != RT_OK || !found || !set.open) goto out;
    rt_decide_request req = {.set_id = set_id, .attempt = 1}; /* the schema counts from 1 */
    snprintf(req.project, sizeof req.project, "%s", set.project);
    if ((rc = rt_sets_resolved_members(w->pg, set_id, &resolved)) != RT_OK) goto out;
    bool complete = rt_set_complete(set.wanted, set.found, resolved);
    snprintf(req.reason, sizeof req.reason, complete ? "set-complete" : "member-resolved: %s",
             task_id);
    if (complete && (rc = rt_sets_mark_complete(w->pg, set_id)) != RT_OK) goto out;
    char *body = rt_decide_request_build(&req);
    if (!body) {
        rc = RT_ENOMEM;
        goto out;
    }
    char message_id[96];
    snprintf(message_id, sizeof message_id, "decide-%lld-%s", set_id,
             complete ? "complete" : task_id);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    rc = rt_amqp_publish(w->ours, w->cfg->amqp_namespace, "decide", body, strlen(body), &opts);
    free(body);
out:
    if (rc == RT_OK) return rt_pg_commit(w->pg);
    int ignored = rt_pg_rollback(w->pg);
    (void)ignored;
    return rc;
}

/* Records a run as a member of its set, then asks for a decision. */
static int join_set(classify *w, long long set_id, const rt_pulse_task *msg)
{
    int rc = add_member(w, set_id, msg);
    if (rc == RT_OK) rc = request_decision(w, set_id, msg->task_id);
    return rc;
}

/* Whether the task group has a retrigger set: lets old-format messages without tags skip
 * the task definition. Postgres answers (an index on task_group_id); when it cannot, look. */
static bool group_has_sets(classify *w, const char *task_group_id)
{
    bool exists = true;
    if (rt_sets_group_has_sets(w->pg, task_group_id, &exists) != RT_OK) return true;
    return exists;
}

/* ---- the retrigger request ---- */

/* A set that asks for no retrigger (the runs on the push are enough): its decide request in
 * place of a retrigger request, and the mark, committed together as publish_request does. */
static int publish_found_only(classify *w, const char *project, const rt_set_row *s)
{
    rt_decide_request req = {.set_id = s->id, .attempt = 1};
    snprintf(req.project, sizeof req.project, "%s", project);
    snprintf(req.reason, sizeof req.reason, "existing-runs");
    char *body = rt_decide_request_build(&req);
    if (!body) return RT_ENOMEM;
    char message_id[64];
    snprintf(message_id, sizeof message_id, "decide-%lld-found", s->id);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    int rc = rt_amqp_publish(w->ours, w->cfg->amqp_namespace, "decide", body, strlen(body), &opts);
    free(body);
    if (rc != RT_OK) return rc;
    return rt_sets_mark_published_commit(w->pg, s->id);
}

/* Publishes the retrigger request of a locked set and marks it published, committing the
 * caller's transaction with the mark (one round trip): a concurrent replica waits on the
 * row lock for the mark and never publishes twice. */
static int publish_request(classify *w, const char *project, const char *revision,
                           const char *label, const rt_set_row *s)
{
    if (s->count == 0) return publish_found_only(w, project, s);
    rt_retrigger_request req = {.set_id = s->id,
                                .label = strdup(label),
                                .run_id = s->original_run_id,
                                .platform = strdup(s->platform),
                                .task_queue_id = strdup(s->task_queue_id),
                                .times = s->count,
                                .round = 1};
    snprintf(req.project, sizeof req.project, "%s", project);
    snprintf(req.revision, sizeof req.revision, "%s", revision);
    snprintf(req.task_id, sizeof req.task_id, "%s", s->original_task_id);
    snprintf(req.task_group_id, sizeof req.task_group_id, "%s", s->task_group_id);
    rt_worker_utc_now(req.requested_at);
    char reason[RT_MESSAGE_REASON_SIZE];
    /* Stored lists that cannot be read go out empty, as they always did. */
    char *body = rt_request_lists_read(&req, s->failing_groups, s->failures, reason) != RT_ENOMEM
                     ? rt_retrigger_request_build(&req)
                     : NULL;
    rt_retrigger_request_free(&req);
    if (!body) return RT_ENOMEM;
    char message_id[64];
    snprintf(message_id, sizeof message_id, "retrigger-set-%lld", s->id);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    int rc =
        rt_amqp_publish(w->ours, w->cfg->amqp_namespace, w->request_key, body, strlen(body), &opts);
    free(body);
    if (rc != RT_OK) return rc;
    return rt_sets_mark_published_commit(w->pg, s->id);
}

/* Publishes the set's request unless somebody did: right after the set's transaction
 * commits, and again on a redelivery when a crash or an error came in between. Under the
 * set's row lock, so that replicas racing here publish it once. */
static int ensure_published(classify *w, const char *project, const char *revision,
                            const char *label)
{
    rt_set_row s;
    bool found = false;
    int rc = rt_sets_lock(w->pg, project, revision, label, &s, &found);
    bool publish = rc == RT_OK && found && !s.published;
    if (publish) rc = publish_request(w, project, revision, label, &s); /* commits */
    rt_set_row_free(&s);
    if (rc == RT_OK && !publish) return rt_pg_commit(w->pg);
    if (rc != RT_OK && rt_pg_in_transaction(w->pg)) {
        int ignored = rt_pg_rollback(w->pg);
        (void)ignored;
    }
    return rc;
}

/* The runs already on the push, as classify_create_set takes them:
 * [{task_id, run_id, state}] (malloc'd JSON text; NULL when out of memory). */
static char *found_json(const classify *w)
{
    rt_found_run *runs = calloc(w->nfound + 1, sizeof *runs);
    if (!runs) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < w->nfound; i++) {
        rt_member_state state;
        if (!rt_member_state_parse(w->found[i].state, &state)) continue; /* not a run state */
        runs[n++] = (rt_found_run){.task_id = w->found[i].task_id,
                                   .run_id = w->found[i].run_id,
                                   .state = rt_member_state_name(state)};
    }
    char *text = rt_found_runs_json(runs, n);
    free(runs);
    return text;
}

/* retrig_retriggers_requested_total and today's budget gauges after a spend. total: the
 * counter the claim left (< 0: ask Redis, as after the backstop gave some back). */
static void report_budget(classify *w, const char *platform, const char *day, int limit, int spent,
                          int total)
{
    const rt_std_metrics *m = rt_metrics_std();
    rt_metric_add(m->retriggers_requested, spent, platform);
    if (total < 0 &&
        rt_budget_spent(w->redis, w->cfg->redis_key_prefix, platform, day, &total) != RT_OK)
        return;
    rt_metric_set(m->budget_spent, total, platform);
    rt_metric_set(m->budget_left, limit > total ? limit - total : 0, platform);
}

/* decide_policy = adaptive: round 1 asks for the model's first batch for the failing tests
 * (their history on other pushes, common/io/history_store.h) less the runs found on the
 * push, instead of eligibility's retriggers_per_failure less them (*wanted, left as it is
 * under seed). */
static int adaptive_first_round(classify *w, const rt_taskdef *task, const rt_errorsummary *es,
                                int *wanted)
{
    if (rt_decide_policy_from_config(w->cfg) != RT_POLICY_ADAPTIVE) return RT_OK;
    rt_decide_settings model;
    rt_decide_settings_from_config(w->cfg, &model);
    /* One line a failing test (the decision compares lines; the history is the test's). */
    rt_failure_line lines[RT_VERDICT_MAX_LINES];
    size_t n = 0;
    for (size_t i = 0; es && i < es->nfailures && n < RT_VERDICT_MAX_LINES; i++) {
        const char *test = es->failures[i].test;
        bool seen = !test || !test[0];
        for (size_t k = 0; !seen && k < n; k++) seen = !strcmp(lines[k].test, test);
        if (!seen) lines[n++] = (rt_failure_line){.test = (char *)test};
    }
    rt_decide_history history[RT_VERDICT_MAX_LINES];
    rt_history_lookup q = {.repository = w->cfg->history_repository,
                           .window_days = w->cfg->history_flaky_window_days,
                           .min_branches = w->cfg->history_flaky_min_branches,
                           .project = task->project,
                           .revision = task->revision};
    int rc = rt_history_model_counts(w->pg, &q, NULL, lines, n, history);
    if (rc != RT_OK) return rc;
    *wanted = (int)rt_round_first(&model, history, n, w->nfound);
    return RT_OK;
}

/* What the set claim works on: the run, its task and the (platform, day) budget. */
typedef struct set_claim {
    classify *w;
    const rt_pulse_task *msg;
    const rt_taskdef *task;
    const rt_errorsummary *es;
    const char *platform;
    char day[11];
    rt_claim_request req;
    long long set_id; /* FIND_SET: the set found (0: none) */
} set_claim;

/* The set, the backstop under the (platform, day) lock, the ledger row and the run's
 * verdict, in one call (migration 0012): committed together, or nothing is written (the
 * set exists, or the backstop refused). The request is published after it, so it never
 * names a set that a crash or a lost connection rolled back. */
static int create_set(set_claim *c, int count, int minimum, rt_claim_flow_facts *f)
{
    classify *w = c->w;
    const rt_pulse_task *msg = c->msg;
    const rt_taskdef *task = c->task;
    char *groups_text = NULL, *failures_text = NULL;
    int lists = rt_request_lists_build(c->es, &groups_text, &failures_text);
    char *found_text = found_json(w);
    rt_set_create in = {.project = task->project,
                        .revision = task->revision,
                        .label = task->label,
                        .platform = c->platform,
                        .task_id = msg->task_id,
                        .run_id = msg->run_id,
                        .count = count,
                        .failing_groups = groups_text,
                        .failures = failures_text,
                        .task_group_id = msg->task_group_id,
                        .task_queue_id =
                            msg->task_queue_id ? msg->task_queue_id : task->task_queue_id,
                        .day = c->day,
                        .limit = c->req.limit,
                        .minimum = minimum,
                        .found = found_text};
    rt_set_created out;
    /* A failure list that cannot be written is an error, never an empty list. */
    int rc = lists == RT_OK && found_text ? rt_sets_create(w->pg, &in, &out) : RT_ENOMEM;
    free(found_text);
    free(groups_text);
    free(failures_text);
    if (rc == RT_OK) {
        f->created = out.created;
        f->refused = out.refused;
        f->kept = out.created ? out.kept : count;
        f->ledger_total = out.ledger_total;
    }
    return rc;
}

/* The line a step's note asks for, before the step. */
static void note(const set_claim *c, const rt_claim_flow_step *s, const rt_claim_flow_facts *f)
{
    const char *task_id = c->msg->task_id;
    char claimed[16], kept[16], total[16];
    switch (s->note) {
    case RT_CLAIM_NOTE_NONE: break;
    case RT_CLAIM_NOTE_EXHAUSTED_RUNS_DECIDE:
        rt_log_info("budget exhausted: the runs already on the push decide", "task_id", task_id,
                    "platform", c->platform, "day", c->day);
        break;
    case RT_CLAIM_NOTE_EXHAUSTED:
        rt_log_info("budget exhausted", "task_id", task_id, "platform", c->platform, "day", c->day);
        break;
    case RT_CLAIM_NOTE_BACKSTOP_CUT:
        snprintf(claimed, sizeof claimed, "%d", s->claimed);
        snprintf(kept, sizeof kept, "%d", s->kept);
        snprintf(total, sizeof total, "%d", f->ledger_total);
        rt_log_warn("budget backstop: the ledger leaves less than Redis granted", "task_id",
                    task_id, "platform", c->platform, "day", c->day, "claimed", claimed, "kept",
                    kept, "ledger", total);
        break;
    case RT_CLAIM_NOTE_SETTLE_FAILED:
        rt_log_warn("budget give-back failed", "task_id", task_id, "error",
                    rt_redis_errstr(c->w->redis));
        break;
    case RT_CLAIM_NOTE_REFUND_FAILED:
        rt_log_warn("budget refund failed", "task_id", task_id, "error",
                    rt_redis_errstr(c->w->redis));
        break;
    }
    if (s->set_gauges) {
        rt_metric_set(rt_metrics_std()->budget_left, s->gauge_left, c->platform);
        rt_metric_set(rt_metrics_std()->budget_spent, s->gauge_spent, c->platform);
    }
}

/* Performs one step of the claim (common/core/claim_flow.h) and records its result. */
static void perform(set_claim *c, const rt_claim_flow_step *s, rt_claim_flow_facts *f)
{
    classify *w = c->w;
    const rt_taskdef *task = c->task;
    const char *task_id = c->msg->task_id;
    int rc = RT_OK;
    switch (s->action) {
    case RT_CLAIM_READ_LEDGER:
        rc = rt_ledger_spent(w->pg, c->platform, c->day, &f->ledger_spent);
        c->req.ledger_spent = f->ledger_spent;
        f->ledger = (rt_claim_call){true, rc};
        break;
    case RT_CLAIM_REDIS:
        c->req.wanted = s->wanted;
        c->req.minimum = s->minimum;
        rc = rt_budget_claim(w->redis, &c->req, &f->claim_result);
        f->claim = (rt_claim_call){true, rc};
        f->claims++;
        f->claim_owner_is_self = rc == RT_OK && f->claim_result.status == RT_CLAIM_EXISTS &&
                                 !strcmp(f->claim_result.owner_task_id, task_id);
        break;
    case RT_CLAIM_FIND_SET: {
        char original[23] = "";
        bool published = false;
        c->set_id = 0;
        rc = find_set(w, task->project, task->revision, task->label, &c->set_id, original,
                      &published);
        f->find_set = (rt_claim_call){true, rc};
        f->set_exists = rc == RT_OK && c->set_id != 0;
        f->set_original_is_self = f->set_exists && !strcmp(original, task_id);
        break;
    }
    case RT_CLAIM_JOIN_SET: f->join = (rt_claim_call){true, join_set(w, c->set_id, c->msg)}; break;
    case RT_CLAIM_CREATE_SET:
        f->create = (rt_claim_call){true, create_set(c, s->count, s->minimum, f)};
        break;
    case RT_CLAIM_SETTLE:
        rc = rt_budget_settle(w->redis, &c->req, s->claimed, s->kept, s->ledger_total, NULL);
        f->settle = (rt_claim_call){true, rc};
        break;
    case RT_CLAIM_REFUND:
        rc = rt_budget_refund(w->redis, w->cfg->redis_key_prefix, c->platform, c->day, s->amount);
        f->refund = (rt_claim_call){true, rc};
        break;
    case RT_CLAIM_PUBLISH:
        rc = ensure_published(w, task->project, task->revision, task->label);
        f->publish = (rt_claim_call){true, rc};
        break;
    case RT_CLAIM_RECORD_VERDICT:
        f->verdict = (rt_claim_call){true, record_verdict(w, c->msg, "skip", s->verdict_reason)};
        break;
    case RT_CLAIM_DONE: break;
    }
}

/* How the message settles, as the claim's last step says, with its log line. */
static void conclude(const set_claim *c, const rt_claim_flow_step *s, const rt_claim_flow_facts *f,
                     rt_outcome *h)
{
    classify *w = c->w;
    const rt_taskdef *task = c->task;
    if (s->reason) snprintf(h->reason, sizeof h->reason, "%s", s->reason);
    rt_settle how = s->end == RT_CLAIM_END_RETRY ? RT_SETTLE_RETRY : RT_SETTLE_REQUEUE;
    switch (s->end == RT_CLAIM_END_ACK ? RT_CLAIM_CAUSE_NONE : s->cause) {
    case RT_CLAIM_CAUSE_NONE: break;
    case RT_CLAIM_CAUSE_POSTGRES:
        rt_outcome_set(h, how, "postgres: %s", rt_pg_errstr(w->pg));
        return;
    case RT_CLAIM_CAUSE_REDIS:
        rt_outcome_set(h, how, "redis: %s", rt_redis_errstr(w->redis));
        return;
    case RT_CLAIM_CAUSE_CREATE_SET:
        rt_outcome_set(h, how, "creating the set: %s",
                       s->error == RT_ENOMEM ? "out of memory" : rt_pg_errstr(w->pg));
        return;
    case RT_CLAIM_CAUSE_PUBLISH:
        rt_outcome_set(h, how, "publishing the retrigger request: %s / %s", rt_pg_errstr(w->pg),
                       rt_amqp_errstr(w->ours));
        return;
    case RT_CLAIM_CAUSE_SET_IN_PROGRESS:
        /* Its owner is between Redis and Postgres: look again later. */
        rt_outcome_set(h, how, "set-in-progress: owned by %s", f->claim_result.owner_task_id);
        return;
    }
    if (s->reason && !strcmp(s->reason, "existing-runs")) {
        char found[16];
        snprintf(found, sizeof found, "%zu", w->nfound);
        rt_log_info("set made from the runs already on the push; no retrigger asked for", "task_id",
                    c->msg->task_id, "project", task->project, "label", task->label, "runs", found);
    } else if (s->reason && !strcmp(s->reason, "retriggers-requested")) {
        report_budget(w, c->platform, c->day, c->req.limit, s->spent, s->counter_total);
        char sp[16];
        snprintf(sp, sizeof sp, "%d", s->spent);
        rt_log_info("retriggers requested", "task_id", c->msg->task_id, "project", task->project,
                    "label", task->label, "platform", c->platform, "times", sp);
    }
}

/* Claims budget and set, creates the set, publishes the request: the steps of
 * common/core/claim_flow.h, performed here. */
static void request_retriggers(classify *w, const rt_pulse_task *msg, const rt_taskdef *task,
                               const rt_errorsummary *es, int wanted, const run_facts *facts,
                               rt_outcome *h)
{
    set_claim c = {.w = w, .msg = msg, .task = task, .es = es};
    c.platform = task->platform ? task->platform : "unknown";
    rt_worker_utc_day(c.day);
    int limit = 0;
    if (rt_budget_limit_for(&w->cfg->budget_limits, c.platform, 600, &limit) != RT_OK) limit = 0;
    /* What the durable ledger says was spent today, the floor of the Redis counter: read
     * with the run's facts, unless the day has turned since. */
    bool ledger_known = facts->known && !strcmp(facts->day, c.day);
    c.req = (rt_claim_request){.key_prefix = w->cfg->redis_key_prefix,
                               .project = task->project,
                               .revision = task->revision,
                               .label = task->label,
                               .platform = c.platform,
                               .task_id = msg->task_id,
                               .day = c.day,
                               .limit = limit,
                               .ledger_spent = facts->ledger_spent};
    rt_claim_flow_facts f = {.wanted = wanted,
                             .budget_minimum = w->cfg->budget_minimum,
                             .limit = limit,
                             .runs_found = w->nfound,
                             .ledger_known = ledger_known,
                             .ledger_spent = facts->ledger_spent};
    rt_claim_flow_step s;
    for (rt_claim_flow_next(&f, &s); s.action != RT_CLAIM_DONE; rt_claim_flow_next(&f, &s)) {
        note(&c, &s, &f);
        perform(&c, &s, &f);
    }
    conclude(&c, &s, &f, h);
}

/* ---- gathering the facts ---- */

/* What rt_run_fetch needs of the worker. */
static rt_run_fetch run_fetch(const classify *w)
{
    return (rt_run_fetch){.http = w->http,
                          .root_url = w->cfg->taskcluster_root_url,
                          .max_body_bytes = (size_t)w->cfg->http_max_body_bytes,
                          .time_budget_ms = w->cfg->message_time_budget_ms,
                          .max_es_bytes = (size_t)w->cfg->errorsummary_max_bytes};
}

static int fetch_task(classify *w, const char *task_id, const rt_taskdef **out, rt_outcome *h)
{
    *out = cache_get(w, task_id);
    if (*out) return RT_OK;
    rt_taskdef def;
    rt_run_fetch fetch = run_fetch(w);
    int rc = rt_run_fetch_task(&fetch, task_id, &def, h);
    if (rc != RT_OK) return rc;
    *out = cache_put(w, task_id, &def);
    if (*out == &def) { /* not cached: keep a heap copy for the caller */
        rt_taskdef *copy = malloc(sizeof *copy);
        if (!copy) {
            rt_taskdef_free(&def);
            return RT_ENOMEM;
        }
        *copy = def;
        *out = copy;
    }
    return RT_OK;
}

/* One run's way through the eligibility rule: what it has learnt so far. */
typedef struct run_call {
    classify *w;
    rt_pulse_task *msg;
    rt_outcome *h;
    const rt_taskdef *task;
    bool task_heap; /* task is this call's copy, not the cache's */
    rt_errorsummary es;
    bool have_es;
    rt_elig_facts facts;
    char original[23];
    long long set_id;
    bool published;
    run_facts pre;
} run_call;

static int fetch_task_for(run_call *c)
{
    if (fetch_task(c->w, c->msg->task_id, &c->task, c->h) != RT_OK) return RT_EUPSTREAM;
    c->task_heap = cache_get(c->w, c->msg->task_id) != c->task;
    c->facts.task = c->task;
    return RT_OK;
}

/* A resolved run of a label with a set is a member of that set, whatever its state (the
 * decision needs completed retriggers too). Modern messages carry the label and the push,
 * so this costs no upstream call; older ones are looked at only when their task group has
 * sets. Failed runs are handled by the eligibility rule. */
static bool join_as_member(run_call *c)
{
    classify *w = c->w;
    rt_pulse_task *msg = c->msg;
    if (msg->event == RT_TASK_EVENT_FAILED) return true;
    const char *label = msg->tag_label, *project = msg->project, *revision = msg->revision;
    if ((!label || !project || !revision) && group_has_sets(w, msg->task_group_id)) {
        if (fetch_task_for(c) != RT_OK) return false;
        label = c->task->label;
        if (c->task->project) project = c->task->project;
        if (c->task->revision) revision = c->task->revision;
    }
    if (!label || !project || !revision) return true;
    if (find_set(w, project, revision, label, &c->set_id, c->original, &c->published) != RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return false;
    }
    if (c->set_id && strcmp(c->original, msg->task_id) != 0 &&
        join_set(w, c->set_id, msg) != RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres or broker: %s", rt_pg_errstr(w->pg));
        return false;
    }
    return true;
}

/* The runs of the label already on the push: members of the set to come. */
static bool learn_existing_runs(run_call *c)
{
    classify *w = c->w;
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t total = 0;
    size_t place = group_listing_begin(c->msg->task_group_id);
    int rc = rt_tc_label_runs_in_group(w->http, w->cfg->taskcluster_root_url, c->msg->task_group_id,
                                       c->task->label, c->msg->task_id, w->found, MAX_FOUND, &total,
                                       errstr);
    group_listing_end(place);
    if (rc != RT_OK) {
        rt_outcome_upstream(c->h, rc, "task group", errstr);
        return false;
    }
    w->nfound = total < MAX_FOUND ? total : MAX_FOUND;
    c->facts.existing_known = true;
    c->facts.existing_retriggers = (int)w->nfound;
    return true;
}

/* Runs already on the push stand for retriggers only when they can be evidence: one that
 * ended in an exception (cancelled, deadline exceeded, worker lost for good) reproduces
 * nothing and passes nothing (verdict.h), so it is no member of the set, and five of them
 * must not leave the set asking for no retrigger. */
static void keep_possible_evidence(run_call *c)
{
    classify *w = c->w;
    size_t kept = 0;
    for (size_t i = 0; i < w->nfound; i++)
        if (strcmp(w->found[i].state, "exception") != 0) w->found[kept++] = w->found[i];
    w->nfound = kept;
    c->facts.existing_retriggers = (int)kept;
}

/* Fetches what the rule asked for into c->facts; false when the request ends (h set). */
static bool learn(run_call *c, rt_elig_need need)
{
    classify *w = c->w;
    rt_pulse_task *msg = c->msg;
    switch (need) {
    case RT_NEED_TASK_DEFINITION:
        if (fetch_task_for(c) != RT_OK) return false;
        if (read_run_facts(w, msg, c->task, &c->pre) != RT_OK) break;
        c->set_id = c->pre.set_id;
        snprintf(c->original, sizeof c->original, "%s", c->pre.original);
        c->published = c->pre.published;
        c->facts.set_known = true;
        c->facts.set_original_task_id = c->set_id ? c->original : NULL;
        return true;
    case RT_NEED_SET_LOOKUP:
        if (find_set(w, c->task->project, c->task->revision, c->task->label, &c->set_id,
                     c->original, &c->published) != RT_OK)
            break;
        c->facts.set_known = true;
        c->facts.set_original_task_id = c->set_id ? c->original : NULL;
        return true;
    case RT_NEED_CLASSIFICATION: {
        rt_th_job job;
        bool found = false;
        char errstr[RT_ERRSTR_SIZE] = "";
        int rc = rt_th_job_for_task(w->http, w->cfg->treeherder_url, msg->task_id, msg->run_id,
                                    &job, &found, errstr);
        if (rc != RT_OK) {
            rt_outcome_upstream(c->h, rc, "treeherder job", errstr);
            return false;
        }
        c->facts.classification_known = true;
        c->facts.classification_id = found ? job.failure_classification_id : 0;
        return true;
    }
    case RT_NEED_ERRORSUMMARY: {
        c->have_es = true; /* freed whatever the fetch left, a timed-out parse too */
        rt_run_fetch fetch = run_fetch(w);
        if (rt_run_fetch_errorsummary(&fetch, msg->task_id, msg->run_id, &c->es, c->h) != RT_OK)
            return false;
        c->facts.errorsummary = &c->es;
        return true;
    }
    case RT_NEED_EXISTING_RETRIGGERS:
        if (!learn_existing_runs(c)) return false;
        keep_possible_evidence(c);
        return true;
    case RT_NEED_NOTHING: return true;
    }
    rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
    return false;
}

/* Acts on the rule's verdict: the retriggers of an eligible failure, else the verdict
 * recorded (a retrigger joins its set; a duplicate makes sure its set was published). */
static void act(run_call *c, const rt_elig_result *r)
{
    classify *w = c->w;
    const rt_taskdef *task = c->task;
    if (r->verdict == RT_ELIG_RETRIGGER) {
        int wanted = r->retriggers;
        if (adaptive_first_round(w, task, &c->es, &wanted) != RT_OK)
            rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        else
            request_retriggers(w, c->msg, task, &c->es, wanted, &c->pre, c->h);
        return;
    }
    const char *verdict = rt_elig_verdict_name(r->verdict);
    int rc = RT_OK;
    if (r->code == RT_ELIG_R_IS_RETRIGGER && task) {
        if (!c->set_id && find_set(w, task->project, task->revision, task->label, &c->set_id,
                                   c->original, &c->published) != RT_OK)
            rc = RT_EDB;
        if (rc == RT_OK && c->set_id) rc = join_set(w, c->set_id, c->msg);
    } else if (r->code == RT_ELIG_R_DUPLICATE && task && !c->published) {
        rc = ensure_published(w, task->project, task->revision, task->label);
    }
    if (rc == RT_OK) rc = record_verdict(w, c->msg, verdict, r->reason);
    if (rc != RT_OK) {
        rt_outcome_set(c->h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        return;
    }
    char run[16];
    snprintf(run, sizeof run, "%d", c->msg->run_id);
    rt_log_debug("classified", "task_id", c->msg->task_id, "run_id", run, "verdict", verdict,
                 "reason", r->reason);
    snprintf(c->h->reason, sizeof c->h->reason, "%s", r->reason); /* for retrig_messages_total */
}

/* The whole decision for one parsed, resolved run: the rule (rt_eligibility_decide) asks for
 * the facts it lacks, one at a time, until it gives a verdict. */
static void classify_run(classify *w, rt_pulse_task *msg, rt_outcome *h)
{
    run_call c = {.w = w, .msg = msg, .h = h, .facts = {.message = msg}};
    w->nfound = 0;
    bool settled = !join_as_member(&c);
    for (int step = 0; step < 10 && !settled; step++) {
        rt_elig_result r;
        rt_eligibility_decide(&w->policy, &c.facts, &r);
        if (r.verdict != RT_ELIG_NEED) {
            act(&c, &r);
            settled = true;
        } else if (!learn(&c, r.need)) {
            settled = true;
        }
    }
    if (!settled) rt_outcome_set(h, RT_SETTLE_DEAD, "internal: eligibility did not settle");
    if (c.have_es) rt_errorsummary_free(&c.es);
    if (c.task_heap && c.task) {
        rt_taskdef_free((rt_taskdef *)c.task);
        free((rt_taskdef *)c.task);
    }
}

/* pre: the delivery already parsed (routes applied) and its run recorded, by the batch
 * (process_batch); NULL: parse and record it here. */
static void handle(classify *w, const rt_amqp_message *m, rt_pulse_task *pre, rt_outcome *h)
{
    if (pre) {
        classify_run(w, pre, h);
        return;
    }
    const char *exchange = rt_amqp_message_header(m, "x-retrig-original-exchange");
    if (!exchange) exchange = m->exchange;
    rt_pulse_task msg;
    char reason[RT_PULSE_REASON_SIZE];
    if (rt_pulse_parse_routed(m->body, m->len, exchange, m->cc, m->cc_count,
                              rt_amqp_message_header(m, "x-retrig-routes"),
                              (size_t)w->cfg->max_message_bytes, &msg, reason) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", reason);
        return;
    }
    if (msg.event == RT_TASK_EVENT_OTHER || msg.event == RT_TASK_EVENT_UNKNOWN) goto out;
    if (msg.run_id == RT_PULSE_NO_RUN) { /* a deadline passed before any run: skipped */
        snprintf(h->reason, sizeof h->reason, "%s", rt_elig_reason_name(RT_ELIG_R_EXCEPTION));
        goto out;
    }

    rt_run_record run = {.task_id = msg.task_id,
                         .run_id = msg.run_id,
                         .state = member_state(&msg),
                         .reason_resolved = msg.reason_resolved,
                         .task_queue_id = msg.task_queue_id,
                         .task_group_id = msg.task_group_id,
                         .project = msg.project,
                         .revision = msg.revision,
                         .label = msg.tag_label,
                         .scheduled_at = msg.scheduled,
                         .started_at = msg.started,
                         .resolved_at = msg.resolved};
    if (rt_runs_record(w->pg, &run) != RT_OK) {
        if (!strcmp(rt_pg_sqlstate(w->pg), "22007") || !strcmp(rt_pg_sqlstate(w->pg), "22008"))
            rt_outcome_set(h, RT_SETTLE_DEAD, "invalid-value:status.runs[] time");
        else
            rt_outcome_set(h, RT_SETTLE_REQUEUE, "postgres: %s", rt_pg_errstr(w->pg));
        goto out;
    }
    classify_run(w, &msg, h);
out:
    rt_pulse_task_free(&msg);
}

/* Our topology (requests, the retry queue with its delays, decide requests), the Pulse queue
 * bound to the task exchanges, and the consumers. Dead letters of Pulse messages go to our
 * broker's dead-letter exchange, so the Pulse connection knows the same topology names
 * (declared on our broker only). */
static int declare(void *ctx, const rt_worker_conns *conns)
{
    classify *w = ctx;
    const rt_config *cfg = w->cfg;
    rt_amqp *ours = conns->broker, *pulse = conns->pulse ? conns->pulse : conns->broker;
    char decide_queue[300];
    snprintf(decide_queue, sizeof decide_queue, "%s.decide", cfg->amqp_namespace);
    rt_amqp_work_queue queues[] = {
        {w->request_queue, "retrigger", NULL, 0},
        {w->retry_queue, "classify-retry", w->delays, w->ndelays},
        {decide_queue, "decide", NULL, 0},
    };
    int rc = rt_worker_declare_queues(ours, cfg, queues, 3);
    static const char *const events[] = {"task-completed", "task-failed", "task-exception"};
    if (rc == RT_OK) rc = rt_worker_bind_pulse(pulse, cfg, w->pulse_queue, events, 3);
    if (rc == RT_OK) rc = rt_amqp_consume(pulse, w->pulse_queue);
    if (rc == RT_OK) rc = rt_amqp_consume(ours, w->retry_queue);
    return rc;
}

static int setup(classify *w, rt_config *cfg, int cache_size)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc;
    w->cfg = cfg;
    rt_elig_policy_from_config(cfg, &w->policy);
    for (size_t i = 0; i < cfg->retry_delays_ms.count && i < MAX_DELAYS; i++)
        w->delays[w->ndelays++] = atoi(cfg->retry_delays_ms.items[i]);
    snprintf(w->retry_queue, sizeof w->retry_queue, "%s.classify-retry", cfg->amqp_namespace);
    snprintf(w->request_queue, sizeof w->request_queue, "%s.retrigger", cfg->amqp_namespace);
    snprintf(w->request_key, sizeof w->request_key, "retrigger");
    char user[128];
    rt_amqp_url_user(cfg->pulse_url, user, sizeof user);
    snprintf(w->pulse_queue, sizeof w->pulse_queue, "queue/%s/%s", user, cfg->pulse_queue_name);
    w->cache_size = (size_t)cache_size;
    if (w->cache_size && !(w->cache = calloc(w->cache_size, sizeof *w->cache))) return RT_ENOMEM;
    rt_http_options hopts;
    rt_http_options_from_config(&hopts, cfg);
    if ((rc = rt_http_new(&w->http, &hopts, errstr)) != RT_OK) {
        rt_log_error("cannot set up HTTP", "error", errstr);
        return rc;
    }
    rt_worker_setup connect = {
        "classify",      RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_PULSE | RT_WORKER_NEEDS_POSTGRES,
        (int)w->lane,    (int)w->lanes,
        declare,         w,
        &rt_worker_redis};
    if ((rc = rt_worker_connect(cfg, &connect, &w->conns)) != RT_OK) return rc;
    w->ours = w->conns.broker;
    w->pulse = w->conns.pulse ? w->conns.pulse : w->conns.broker;
    w->redis = w->conns.redis;
    w->pg = w->conns.pg;
    w->settler = (rt_worker_settler){w->ours, w->retry_queue, w->delays, w->ndelays, NULL, NULL};
    return RT_OK;
}

static void teardown(classify *w)
{
    rt_worker_disconnect(&w->conns);
    rt_http_free(w->http);
    for (size_t i = 0; i < w->cache_size; i++) rt_taskdef_free(&w->cache[i].def);
    free(w->cache);
}

/* Handles one delivery from src and settles it (ack, retry, dead letter or requeue). */
static void process(classify *w, rt_amqp *src, rt_amqp_message *m, rt_pulse_task *pre)
{
    rt_outcome h = {RT_SETTLE_ACK, ""};
    double started = rt_metrics_now();
    handle(w, m, pre, &h);
    if (rt_worker_settle(&w->settler, src, m, &h, started)) rt_worker_pause();
}

/* ---- the fast path: completed and exception runs, many at a time ---- */

#define BATCH_MAX 256
/* One statement per batch (rt_runs_record_batch, common/store/runs.h): picks out the completed
 * and exception runs that may be members of a retrigger set, for the full path to record, and
 * inserts every other run with its verdict, and the failed runs without one (the full path
 * classifies them, without recording them again). */
enum { FULL_PATH, FAST_PATH, RECORD_ONLY };

/* Parses a delivery for the batch. FAST_PATH: it needs nothing but a runs row with its verdict
 * (or nothing at all); RECORD_ONLY: a failed run, recorded by the batch and then classified
 * by the full path from msg; FULL_PATH: everything else (invalid bodies, retries), msg unset. */
static int batch_candidate(classify *w, const rt_amqp_message *m, rt_pulse_task *msg)
{
    if (rt_amqp_message_header(m, "x-retrig-original-exchange")) return FULL_PATH; /* a retry */
    char reason[RT_PULSE_REASON_SIZE];
    if (rt_pulse_parse(m->body, m->len, m->exchange, (size_t)w->cfg->max_message_bytes, msg,
                       reason) != RT_OK)
        return FULL_PATH;
    for (size_t i = 0; i < m->cc_count; i++) (void)rt_pulse_apply_route(msg, m->cc[i]);
    if (msg->run_id == RT_PULSE_NO_RUN) return FULL_PATH; /* no run to write */
    return msg->event == RT_TASK_EVENT_FAILED ? RECORD_ONLY : FAST_PATH;
}

/* Handles the deliveries of one batch: completed and exception runs of task groups that
 * have no retrigger set are written in one INSERT and acked; everything else goes through
 * process() one by one. Long because its three stages share their arrays and the labels
 * fallback and slow: sort each delivery (fast, record-only or full path), write the fast and
 * record-only rows in one INSERT of FAST_COLUMNS arrays (one line per column), then settle the
 * others one by one and ack the fast ones in one frame. */
static void process_batch(classify *w, rt_amqp *src, rt_amqp_message *batch, size_t n)
{
    double started = rt_metrics_now();
    rt_pulse_task *msgs = calloc(n, sizeof *msgs);
    int *kind = calloc(n, sizeof *kind);
    bool *recorded = calloc(n, sizeof *recorded);
    rt_amqp_message **acks = calloc(n, sizeof *acks);
    if (!msgs || !kind || !recorded || !acks) goto fallback;

    for (size_t i = 0; i < n; i++) kind[i] = batch_candidate(w, &batch[i], &msgs[i]);
    size_t rows = 0;
    for (size_t i = 0; i < n; i++)
        if (kind[i] != FULL_PATH && msgs[i].event != RT_TASK_EVENT_OTHER) rows++;
    if (rows) {
        rt_run_record *records = calloc(n, sizeof *records);
        bool *member = calloc(n, sizeof *member);
        for (size_t i = 0; records && i < n; i++) {
            if (kind[i] == FULL_PATH || msgs[i].event == RT_TASK_EVENT_OTHER) continue;
            rt_pulse_task *t = &msgs[i];
            bool failed = kind[i] == RECORD_ONLY;
            bool completed = t->event == RT_TASK_EVENT_COMPLETED;
            records[i] = (rt_run_record){.task_id = t->task_id,
                                         .run_id = t->run_id,
                                         .state = member_state(t),
                                         .reason_resolved = t->reason_resolved,
                                         .task_queue_id = t->task_queue_id,
                                         .task_group_id = t->task_group_id,
                                         .project = t->project,
                                         .revision = t->revision,
                                         .label = t->tag_label,
                                         .scheduled_at = t->scheduled,
                                         .started_at = t->started,
                                         .resolved_at = t->resolved,
                                         .verdict = failed ? NULL : "skip",
                                         .verdict_reason = failed      ? NULL
                                                           : completed ? "not-failed"
                                                                       : "exception"};
        }
        int rc = records && member ? rt_runs_record_batch(w->pg, records, n, member) : RT_ENOMEM;
        if (rc != RT_OK) {
            /* A bad value in one row (or Postgres down): let the full path sort them out. */
            rt_log_debug("batch insert failed; handling one by one", "error", rt_pg_errstr(w->pg));
            for (size_t i = 0; i < n; i++)
                if (msgs[i].event != RT_TASK_EVENT_OTHER) kind[i] = FULL_PATH;
        } else {
            for (size_t i = 0; i < n; i++) recorded[i] = kind[i] == RECORD_ONLY;
            /* May be a member of a set: the full path says. */
            for (size_t i = 0; i < n; i++)
                if (member[i]) kind[i] = FULL_PATH;
        }
        free(records);
        free(member);
    }
    goto slow;
fallback:
    /* Something failed before the batch was written: every message takes the full path. */
    for (size_t i = 0; kind && i < n; i++) kind[i] = FULL_PATH;
slow:
    /* The others first, each settled on its own, so that the fast ones, whose rows are
     * written, can then be acked together in one frame. A failed run the batch recorded is
     * classified from its parsed message. */
    for (size_t i = 0; i < n; i++)
        if (!kind || kind[i] != FAST_PATH)
            process(w, src, &batch[i], recorded && recorded[i] ? &msgs[i] : NULL);
    if (kind) {
        size_t nfast = 0;
        for (size_t i = 0; i < n; i++)
            if (kind[i] == FAST_PATH) acks[nfast++] = &batch[i];
        if (nfast && rt_amqp_ack_many(src, acks, nfast) != RT_OK)
            rt_log_warn("could not ack; the broker will redeliver", "error", rt_amqp_errstr(src));
        for (size_t i = 0; i < n; i++)
            if (kind[i] == FAST_PATH)
                rt_metric_inc(rt_metrics_std()->messages, "acked",
                              msgs[i].event == RT_TASK_EVENT_COMPLETED   ? "not-failed"
                              : msgs[i].event == RT_TASK_EVENT_EXCEPTION ? "exception"
                                                                         : "other-event");
        if (nfast)
            rt_metric_observe(rt_metrics_std()->processing_seconds, rt_metrics_now() - started,
                              "batch");
    }
    for (size_t i = 0; msgs && i < n; i++) rt_pulse_task_free(&msgs[i]);
    free(msgs);
    free(kind);
    free(recorded);
    free(acks);
}

/* ---- lanes: classify_concurrency loops in one process ---- */

/* Each lane is a whole classifier (its own broker, Redis, Postgres and HTTP connections and
 * task cache) consuming the same queues, like replicas sharing a process: a lane waiting on
 * Taskcluster does not hold up the others, and each waits for its services on its own.
 *
 * The configuration they share is an immutable snapshot, swapped by pointer: a lane takes
 * the current one at each safe point and keeps it (a reference) until the next, so a batch
 * reads one configuration from start to end. A SIGHUP is applied by whichever lane reaches
 * a safe point first: it copies the current configuration, applies the reload to the copy
 * and publishes it; no lane waits for another's batch, and the old snapshot is freed when
 * its last lane lets go of it. */
struct snapshot {
    atomic_int refs;
    rt_config cfg;
    rt_elig_policy policy; /* derived from cfg; points into it */
};

static pthread_mutex_t g_snapshot_lock = PTHREAD_MUTEX_INITIALIZER; /* g_snapshot's pointer */
static snapshot *g_snapshot; /* the current one; holds one reference */
static atomic_uint g_snapshot_generation;
static pthread_mutex_t g_reload_lock = PTHREAD_MUTEX_INITIALIZER; /* one lane reloads */

static snapshot *snapshot_new(const rt_config *from)
{
    snapshot *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (rt_config_copy(&s->cfg, from) != RT_OK) {
        free(s);
        return NULL;
    }
    atomic_init(&s->refs, 1);
    rt_elig_policy_from_config(&s->cfg, &s->policy);
    return s;
}

static void snapshot_release(snapshot *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        rt_config_free(&s->cfg);
        free(s);
    }
}

static snapshot *snapshot_acquire(unsigned *generation)
{
    pthread_mutex_lock(&g_snapshot_lock);
    snapshot *s = g_snapshot;
    atomic_fetch_add(&s->refs, 1);
    *generation = atomic_load(&g_snapshot_generation);
    pthread_mutex_unlock(&g_snapshot_lock);
    return s;
}

static void snapshot_publish(snapshot *s)
{
    pthread_mutex_lock(&g_snapshot_lock);
    snapshot *old = g_snapshot;
    g_snapshot = s;
    atomic_fetch_add(&g_snapshot_generation, 1);
    pthread_mutex_unlock(&g_snapshot_lock);
    snapshot_release(old);
}

/* Applies a pending SIGHUP to a copy of the current configuration and publishes it. */
static void reload_if_asked(void)
{
    if (!rt_worker_reload_pending() || pthread_mutex_trylock(&g_reload_lock) != 0) return;
    unsigned generation;
    snapshot *current = snapshot_acquire(&generation);
    snapshot *next = snapshot_new(&current->cfg);
    snapshot_release(current);
    if (!next) {
        rt_log_error("reload: out of memory; keeping the running configuration");
    } else if (rt_worker_reload(&next->cfg)) {
        rt_elig_policy_from_config(&next->cfg, &next->policy);
        snapshot_publish(next);
    } else {
        snapshot_release(next);
    }
    pthread_mutex_unlock(&g_reload_lock);
}

/* The lane's safe point (after health): a reload, and the newest snapshot. */
static int lane_tick(void *ctx, bool idle)
{
    classify *w = ctx;
    (void)idle;
    reload_if_asked();
    if (atomic_load(&g_snapshot_generation) != w->snap_generation) {
        snapshot *old = w->snap;
        w->snap = snapshot_acquire(&w->snap_generation);
        w->cfg = &w->snap->cfg;
        w->policy = w->snap->policy;
        snapshot_release(old);
    }
    return 0;
}

static void lane_batch(void *ctx, rt_amqp *src, rt_amqp_message *batch, size_t n)
{
    process_batch(ctx, src, batch, n);
}

/* The retry queue's deliveries on their own connection (when Pulse is another broker). */
static void lane_one(void *ctx, rt_amqp *src, rt_amqp_message *m, rt_outcome *o)
{
    classify *w = ctx;
    handle(w, m, NULL, o);
    (void)src;
}

typedef struct lane {
    classify w;
    int cache_size;
    pthread_t thread;
    bool started; /* its thread runs */
    int rc;       /* what its start-up came to */
} lane;

/* One lane's life: wait for its services, consume until a stop, let go. */
static void *lane_main(void *arg)
{
    lane *l = arg;
    classify *w = &l->w;
    w->snap = snapshot_acquire(&w->snap_generation);
    l->rc = setup(w, &w->snap->cfg, l->cache_size);
    w->policy = w->snap->policy;
    if (l->rc == RT_OK) {
        if (w->lane == 0) {
            char count[16];
            snprintf(count, sizeof count, "%zu", w->lanes);
            rt_log_info("consuming", "queue", w->pulse_queue, "retry_queue", w->retry_queue,
                        "lanes", count);
        }
        /* With one connection, deliveries of both queues arrive on it. */
        rt_worker_loop loop = {.cfg = w->cfg,
                               .conns = &w->conns,
                               .lane = (int)w->lane,
                               .lanes = (int)w->lanes,
                               .sources = {w->pulse, w->ours},
                               .batch_max = BATCH_MAX,
                               .settler = &w->settler,
                               .ctx = w,
                               .handle = lane_one,
                               .handle_batch = lane_batch,
                               .tick = lane_tick};
        rt_worker_consume(&loop);
    } else if (l->rc != RT_ESTOPPED) {
        rt_stop_request(); /* a lane that cannot start stops the process */
    }
    teardown(w);
    snapshot_release(w->snap);
    return NULL;
}

static int run(rt_config *cfg)
{
    size_t nlanes = (size_t)cfg->classify_concurrency;
    /* One malloc arena for every lane: an arena per thread costs each lane its own peak of
     * parsed documents in resident memory, and the lanes spend their time waiting. */
    if (nlanes > 1) mallopt(M_ARENA_MAX, 1);
    lane *lanes = calloc(nlanes, sizeof *lanes);
    if (!lanes || !(g_snapshot = snapshot_new(cfg))) {
        free(lanes);
        rt_log_error("out of memory");
        return 1;
    }
    /* The task cache is shared out between the lanes: the process keeps task_cache_size. */
    int cache_size = cfg->task_cache_size;
    for (size_t i = 0; i < nlanes; i++) {
        lanes[i].w.lane = i;
        lanes[i].w.lanes = nlanes;
        lanes[i].cache_size = cache_size / (int)nlanes + (i < (size_t)cache_size % nlanes ? 1 : 0);
    }
    for (size_t i = 1; i < nlanes; i++) {
        if (pthread_create(&lanes[i].thread, NULL, lane_main, &lanes[i]) != 0) {
            rt_log_error("cannot start a lane; stopping");
            lanes[i].rc = RT_ENOMEM;
            rt_stop_request();
            break;
        }
        lanes[i].started = true;
    }
    lane_main(&lanes[0]);
    for (size_t i = 1; i < nlanes; i++)
        if (lanes[i].started) pthread_join(lanes[i].thread, NULL);
    int rc = RT_OK;
    for (size_t i = 0; i < nlanes && rc == RT_OK; i++)
        if (lanes[i].rc != RT_OK && lanes[i].rc != RT_ESTOPPED) rc = lanes[i].rc;
    if (rc == RT_OK) rt_log_info("stopping: finished the messages in hand");
    free(lanes);
    snapshot_release(g_snapshot);
    g_snapshot = NULL;
    return rt_worker_exit_status(rc);
}

static int check(rt_config *cfg)
{
    return rt_worker_check_result(rt_worker_check_services(
        cfg, "classify", RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_POSTGRES, &rt_worker_redis));
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = {
        "classify",
        "Consumes Taskcluster task-completed/failed/exception messages from Pulse, decides\n"
        "which failed test tasks to retrigger, and publishes retrigger requests.",
        run,
        check,
    };
    return rt_worker_main(&def, argc, argv);
}
