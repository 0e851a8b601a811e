/* SPDX-License-Identifier: MPL-2.0 */
/* pool_flow.c - retrig-decide under decide_policy = pooled (see pool_flow.h). */
#include "workers/decide/pool_flow.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/decide_pool.h"
#include "common/core/messages.h"
#include "common/io/history_store.h"
#include "common/io/log.h"
#include "common/policy.h"
#include "common/store/pools.h"

#define PUSH_RUNS_MAX  256
#define PUSH_RUNS_DAYS 14 /* the partitions a push's runs are looked for in */
#define SWEEP_MAX      50

/* What the model saw of one configuration, with where it came from. */
typedef struct pool_config {
    char name[RT_POOLS_CONFIG_SIZE];
    long long set_id; /* 0: from the test history */
    size_t member;    /* set_id != 0: its place in the members */
} pool_config;

typedef struct pool_look {
    rt_pool_row row;
    rt_pool_member members[RT_POOL_MAX_CONFIGS];
    size_t nmembers;
    pool_config where[RT_POOL_MAX_CONFIGS];
    rt_pool_config configs[RT_POOL_MAX_CONFIGS];
    size_t nconfigs;
    size_t planned[RT_POOL_MAX_CONFIGS];   /* per member: planned, not made yet */
    bool unpublished[RT_POOL_MAX_CONFIGS]; /* per member: made, its request not out */
    size_t spent;
    rt_pool_result result;
} pool_look;

void pool_flow_init(pool_flow *p, const rt_config *cfg, rt_pg *pg, rt_amqp *amqp,
                    decide_rounds *rounds)
{
    memset(p, 0, sizeof *p);
    p->cfg = cfg;
    p->on = rt_decide_policy_pooled(cfg);
    rt_decide_settings_from_config(cfg, &p->model);
    p->pg = pg;
    p->amqp = amqp;
    p->rounds = rounds;
}

/* A line's test is the pooled test: the same path, or one ending with the other after a
 * '/' (Treeherder's lines and the errorsummary may name it from different roots). */
static bool same_test(const char *a, const char *b)
{
    if (!a || !b || !a[0] || !b[0]) return false;
    size_t la = strlen(a), lb = strlen(b);
    if (la == lb) return !strcmp(a, b);
    const char *longer = la > lb ? a : b, *shorter = la > lb ? b : a;
    size_t ll = la > lb ? la : lb, ls = la > lb ? lb : la;
    return !strcmp(longer + ll - ls, shorter) && longer[ll - ls - 1] == '/';
}

/* The set's pooled set, joining it when retrig-classify did not. */
static int pool_of(pool_flow *p, const pool_set *set, long long *pool_id)
{
    int rc = rt_pools_of_set(p->pg, set->id, pool_id);
    if (rc != RT_OK || *pool_id) return rc;
    rt_pools_set_failure f;
    if ((rc = rt_pools_set_failure_of(p->pg, set->id, &f)) != RT_OK || !f.test[0]) return rc;
    char config[RT_POOLS_CONFIG_SIZE];
    if (rt_pool_config_name(f.platform[0] ? f.platform : "unknown", f.label, config,
                            sizeof config) != RT_OK)
        snprintf(config, sizeof config, "unknown");
    rt_pools_join_in in = {.project = f.project,
                           .revision = f.revision,
                           .test = f.test,
                           .group_name = f.group_name[0] ? f.group_name : NULL,
                           .set_id = set->id,
                           .config = config,
                           .settle_s = p->cfg->decide_pool_settle_s,
                           .deadline_minutes = p->cfg->decide_pool_deadline_minutes};
    bool opened = false, joined = false;
    if ((rc = rt_pools_join(p->pg, &in, pool_id, &opened, &joined)) != RT_OK) return rc;
    if (joined)
        rt_log_info("set joined its pooled set at decide time", "set_id", set->id_text, "test",
                    f.test);
    return rt_pools_of_set(p->pg, set->id, pool_id); /* the one it is a member of */
}

/* What the set's runs show of the pooled test, recorded on its member row. */
static int record_runs(pool_flow *p, const pool_set *set, const char *test)
{
    if (!set->runs) return RT_OK;
    int evidence = 0, reproduced = 0, unusable = 0;
    for (size_t i = 0; i < set->runs->nruns; i++) {
        const rt_verdict_run *run = &set->runs->runs[i];
        switch (run->state) {
        case RT_RUN_PASSED: evidence++; break;
        case RT_RUN_FAILED: {
            evidence++;
            bool same = false;
            for (size_t k = 0; k < run->nlines && !same; k++)
                same = same_test(run->lines[k].test, test);
            reproduced += same;
            break;
        }
        case RT_RUN_EXCEPTION:
        case RT_RUN_NO_DATA: unusable++; break;
        case RT_RUN_PENDING: break;
        }
    }
    return rt_pools_member_evidence(p->pg, set->id, evidence, reproduced, unusable);
}

/* The configurations: the members (failing, the opening one first), then the others where
 * the test's group ran on the push (the test history). */
static int gather_configs(pool_flow *p, pool_look *l, bool deadline)
{
    int rc = rt_pools_members(p->pg, l->row.id, l->members, RT_POOL_MAX_CONFIGS, &l->nmembers);
    if (rc != RT_OK) return rc;
    l->nconfigs = 0;
    l->spent = 0;
    for (size_t i = 0; i < l->nmembers; i++) {
        const rt_pool_member *m = &l->members[i];
        int asked_for = m->requested + m->found;
        int pending = asked_for - m->retriggers - m->unusable;
        /* A share of the latest round planned and not made yet (a crash, or a replica
         * between its plan and its asks). */
        bool latest = m->asked_round == l->row.rounds && m->asked > 0;
        l->planned[i] =
            latest && !m->round_made && m->latest_set_round < m->set_round ? (size_t)m->asked : 0;
        if (pending < 0) pending = 0;
        pending += (int)l->planned[i];
        /* Made but its request not out (a crash between the two): asked again, which
         * publishes it; its retriggers are pending already (the set's count has them). */
        l->unpublished[i] = latest && m->round_made && !m->round_refused && !m->round_published;
        if (deadline) pending = 0; /* the retriggers still missing are left out */
        l->configs[l->nconfigs] = (rt_pool_config){.failed = true,
                                                   .retriggers = (size_t)m->retriggers,
                                                   .reproduced = (size_t)m->reproduced,
                                                   .pending = (size_t)pending};
        l->where[l->nconfigs] = (pool_config){.set_id = m->set_id, .member = i};
        snprintf(l->where[l->nconfigs].name, sizeof l->where[0].name, "%s", m->config);
        l->spent += (size_t)(m->retriggers + m->unusable + pending);
        l->nconfigs++;
    }
    if (!l->row.group_name[0]) return RT_OK;
    rt_pool_push_run *runs = calloc(PUSH_RUNS_MAX, sizeof *runs);
    size_t nruns = 0;
    rc = runs ? rt_pools_push_runs(p->pg, l->row.project, l->row.revision, l->row.group_name,
                                   l->row.test, PUSH_RUNS_DAYS, runs, PUSH_RUNS_MAX, &nruns)
              : RT_ENOMEM;
    for (size_t i = 0; rc == RT_OK && i < nruns; i++) {
        char name[RT_POOLS_CONFIG_SIZE];
        if (rt_pool_config_name(runs[i].platform, runs[i].label, name, sizeof name) != RT_OK)
            continue;
        size_t c = 0;
        while (c < l->nconfigs && strcmp(l->where[c].name, name) != 0) c++;
        if (c < l->nconfigs && l->where[c].set_id) continue; /* a member: its set says */
        if (c == l->nconfigs) {
            if (l->nconfigs == RT_POOL_MAX_CONFIGS) continue;
            l->configs[c] = (rt_pool_config){.failed = runs[i].failed};
            l->where[c] = (pool_config){.set_id = 0};
            snprintf(l->where[c].name, sizeof l->where[c].name, "%s", name);
            l->nconfigs++;
            continue;
        }
        l->configs[c].retriggers++; /* a later run of the configuration on the push */
        l->configs[c].reproduced += runs[i].failed;
        l->spent++;
    }
    free(runs);
    return rc;
}

/* Whether the push's other tasks of the test's group have finished (rt_pool_settle_done):
 * the pooled set's tasks (migration 0042) against the configurations whose result is known,
 * its members' and those where the group's runs on the push passed the test. */
static int settle_done(pool_flow *p, long long pool_id, const char *project, const char *revision,
                       const char *group_name, const char *test, bool *done)
{
    *done = false;
    rt_pools_task *tasks = calloc(RT_POOLS_MAX_TASKS, sizeof *tasks);
    rt_pool_push_run *runs = calloc(PUSH_RUNS_MAX, sizeof *runs);
    rt_pool_member *members = calloc(RT_POOL_MAX_CONFIGS, sizeof *members);
    rt_pool_push_task *view = calloc(RT_POOLS_MAX_TASKS, sizeof *view);
    char(*names)[RT_POOLS_CONFIG_SIZE] = calloc(PUSH_RUNS_MAX, sizeof *names);
    const char **known = calloc(RT_POOL_MAX_CONFIGS + PUSH_RUNS_MAX, sizeof *known);
    size_t ntasks = 0, nruns = 0, nmembers = 0, nknown = 0;
    int rc = tasks && runs && members && view && names && known ? RT_OK : RT_ENOMEM;
    if (rc == RT_OK)
        rc = rt_pools_tasks(p->pg, pool_id, PUSH_RUNS_DAYS, tasks, RT_POOLS_MAX_TASKS, &ntasks);
    if (rc == RT_OK && ntasks)
        rc = rt_pools_members(p->pg, pool_id, members, RT_POOL_MAX_CONFIGS, &nmembers);
    if (rc == RT_OK && ntasks && group_name[0])
        rc = rt_pools_push_runs(p->pg, project, revision, group_name, test, PUSH_RUNS_DAYS, runs,
                                PUSH_RUNS_MAX, &nruns);
    if (rc == RT_OK && ntasks) {
        for (size_t i = 0; i < nmembers; i++) known[nknown++] = members[i].config;
        for (size_t i = 0; i < nruns; i++) /* a failing one waits for its member set */
            if (!runs[i].failed && rt_pool_config_name(runs[i].platform, runs[i].label, names[i],
                                                       sizeof names[i]) == RT_OK)
                known[nknown++] = names[i];
        for (size_t i = 0; i < ntasks; i++)
            view[i] = (rt_pool_push_task){.config = tasks[i].config,
                                          .finished = tasks[i].finished,
                                          .failed = tasks[i].failed};
        *done = rt_pool_settle_done(view, ntasks, known, nknown);
    }
    free(tasks);
    free(runs);
    free(members);
    free(view);
    free(names);
    free(known);
    return rc;
}

/* The pooled evidence, one entry per configuration, with the posterior. NULL: no memory. */
static char *evidence_text(const pool_look *l, const char *verdict, const char *reason)
{
    json_t *configs = json_array(), *doc = json_object();
    bool whole = configs && doc;
    for (size_t i = 0; whole && i < l->nconfigs; i++) {
        const rt_pool_config *c = &l->configs[i];
        json_t *o = json_object();
        whole =
            o && !json_object_set_new(o, "config", json_string(l->where[i].name)) &&
            !json_object_set_new(
                o, "set_id", l->where[i].set_id ? json_integer(l->where[i].set_id) : json_null()) &&
            !json_object_set_new(o, "push_run", json_string(c->failed ? "failed" : "passed")) &&
            !json_object_set_new(o, "retriggers", json_integer((json_int_t)c->retriggers)) &&
            !json_object_set_new(o, "reproduced", json_integer((json_int_t)c->reproduced)) &&
            !json_object_set_new(o, "pending", json_integer((json_int_t)c->pending)) &&
            !json_object_set_new(o, "more", json_integer((json_int_t)l->result.more[i]));
        if (!whole || json_array_append_new(configs, o)) {
            if (whole) o = NULL; /* stolen */
            json_decref(o);
            whole = false;
        }
    }
    whole = whole && !json_object_set_new(doc, "configs", configs);
    if (!whole) json_decref(configs);
    whole = whole && !json_object_set_new(doc, "p_regression", json_real(l->result.p_regression)) &&
            !json_object_set_new(doc, "verdict", json_string(verdict)) &&
            !json_object_set_new(doc, "reason", json_string(reason)) &&
            !json_object_set_new(doc, "spent", json_integer((json_int_t)l->spent));
    char *text = whole ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    return text;
}

/* Asks every open member set but `except` to decide: they store the pooled verdict. */
static int wake_members(pool_flow *p, const pool_look *l, long long except)
{
    int rc = RT_OK;
    for (size_t i = 0; i < l->nmembers && rc == RT_OK; i++) {
        const rt_pool_member *m = &l->members[i];
        if (m->set_id == except || m->set_decided) continue;
        rt_decide_request req = {.set_id = m->set_id, .attempt = 1};
        snprintf(req.project, sizeof req.project, "%s", m->project);
        snprintf(req.reason, sizeof req.reason, "pooled-verdict");
        char *body = rt_decide_request_build(&req);
        if (!body) return RT_ENOMEM;
        char message_id[64];
        snprintf(message_id, sizeof message_id, "decide-%lld-pooled", m->set_id);
        rt_amqp_publish_opts opts = {.message_id = message_id};
        rc = rt_amqp_publish(p->amqp, p->cfg->amqp_namespace, "decide", body, strlen(body), &opts);
        free(body);
    }
    return rc;
}

/* Makes the shares of the pooled set's latest round not made yet (after its plan). */
static int ask_planned(pool_flow *p, const pool_look *l, const pool_set *set)
{
    for (size_t i = 0; i < l->nmembers; i++) {
        const rt_pool_member *m = &l->members[i];
        if (!l->planned[i] && !l->unpublished[i]) continue;
        char id_text[32];
        snprintf(id_text, sizeof id_text, "%lld", m->set_id);
        rounds_set rs = {.id = m->set_id,
                         .id_text = id_text,
                         .project = l->row.project,
                         .revision = l->row.revision,
                         .failure_seen_at = set->failure_seen_at};
        bool refused = false;
        size_t more = l->planned[i] ? l->planned[i] : (size_t)m->asked;
        int rc = decide_rounds_ask_more(p->rounds, &rs, m->set_round, more, l->result.p_regression,
                                        &refused);
        if (rc != RT_OK) return rc;
        char round[16], times[24];
        snprintf(round, sizeof round, "%d", m->set_round);
        snprintf(times, sizeof times, "%zu", more);
        rt_log_info(refused ? "pooled round refused by the budget" : "pooled round asked for",
                    "set_id", id_text, "config", m->config, "round", round, "wanted", times);
    }
    return RT_OK;
}

static void take(rt_verdict_result *result, rt_verdict verdict, const char *reason)
{
    result->verdict = verdict;
    snprintf(result->reason, sizeof result->reason, "%s", reason);
}

/* The look under the pooled set's row lock (open transaction): decide, plan a round, or
 * record the wait; commits. *step what the request comes to. */
static int look(pool_flow *p, pool_look *l, const pool_set *set, rt_verdict_result *result,
                pool_step *step)
{
    bool deadline = l->row.past_deadline || set->deadline;
    int rc = gather_configs(p, l, deadline);
    if (rc != RT_OK) return rc;
    rt_failure_line line = {.test = l->row.test};
    rt_decide_history history = {0, 0, -1};
    rt_history_lookup q = {.repository = p->cfg->history_repository,
                           .window_days = p->cfg->history_flaky_window_days,
                           .min_branches = p->cfg->history_flaky_min_branches,
                           .project = l->row.project,
                           .revision = l->row.revision};
    if ((rc = rt_history_model_counts(p->pg, &q, set->failure_seen_at, &line, 1, &history)) !=
        RT_OK)
        return rc;
    size_t spent = l->spent > (size_t)l->row.retriggers ? l->spent : (size_t)l->row.retriggers;
    rt_pool_input in = {
        .history = history, .configs = l->configs, .nconfigs = l->nconfigs, .spent = spent};
    if (rt_pool_evaluate(&p->model, &in, &l->result) != RT_OK) return RT_EINVAL;
    rt_pool_result *r = &l->result;
    /* Retriggers go to member sets only: a failing configuration the history knows of has
     * no set to carry them (its task was not eligible, or its failure has not come in). */
    size_t asked = 0;
    for (size_t i = 0; i < l->nconfigs; i++) {
        if (!l->where[i].set_id) r->more[i] = 0;
        asked += r->more[i];
    }
    if (r->verdict == RT_VERDICT_NOT_YET &&
        (deadline || (!strcmp(r->reason, "need-more") && !asked))) {
        /* Nothing more will come: the posterior decides. */
        take(result, r->p_regression >= 0.5 ? RT_VERDICT_REGRESSION : RT_VERDICT_INTERMITTENT,
             deadline ? "deadline" : "low-confidence");
        snprintf(r->reason, sizeof r->reason, "%s", result->reason);
        r->verdict = result->verdict;
    }
    if (r->verdict != RT_VERDICT_NOT_YET) {
        const char *verdict = rt_verdict_name(r->verdict);
        char *text = evidence_text(l, verdict, r->reason);
        rc = text ? rt_pools_decide(p->pg, l->row.id, verdict, r->reason, r->p_regression, text)
                  : RT_ENOMEM;
        free(text);
        if (rc == RT_OK) rc = wake_members(p, l, set->id);
        if (rc == RT_OK) rc = rt_pg_commit(p->pg);
        if (rc != RT_OK) return rc;
        take(result, r->verdict, r->reason);
        char pool[32], pr[32];
        snprintf(pool, sizeof pool, "%lld", l->row.id);
        snprintf(pr, sizeof pr, "%.4f", r->p_regression);
        rt_log_info("pooled verdict", "pool_id", pool, "test", l->row.test, "verdict", verdict,
                    "reason", r->reason, "p_regression", pr);
        *step = POOL_DECIDED;
        return RT_OK;
    }
    char *text = evidence_text(l, "not-yet", r->reason);
    rc = text ? rt_pools_evaluated(p->pg, l->row.id, r->p_regression, text) : RT_ENOMEM;
    free(text);
    if (rc == RT_OK && asked) {
        /* The round's shares, planned under the lock: each is the member set's next round. */
        long long ids[RT_POOL_MAX_CONFIGS];
        int shares[RT_POOL_MAX_CONFIGS], set_rounds[RT_POOL_MAX_CONFIGS];
        size_t n = 0;
        for (size_t i = 0; i < l->nconfigs; i++) {
            if (!r->more[i]) continue;
            rt_pool_member *m = &l->members[l->where[i].member];
            ids[n] = m->set_id;
            shares[n] = (int)r->more[i];
            set_rounds[n] = m->latest_set_round + 1;
            m->asked_round = l->row.rounds + 1;
            m->asked = shares[n];
            m->set_round = set_rounds[n];
            l->planned[l->where[i].member] = r->more[i];
            n++;
        }
        l->row.rounds++;
        rc = rt_pools_plan_round(p->pg, l->row.id, l->row.rounds, ids, shares, set_rounds, n);
    }
    if (rc == RT_OK) rc = rt_pg_commit(p->pg);
    if (rc != RT_OK) return rc;
    *step = POOL_WAIT;
    return ask_planned(p, l, set);
}

pool_step pool_flow_apply(pool_flow *p, const pool_set *set, rt_verdict_result *result,
                          pool_view *view, rt_outcome *h)
{
    memset(view, 0, sizeof *view);
    if (!p->on) return POOL_NOT_POOLED;
    view->seed_verdict = result->verdict;
    snprintf(view->seed_reason, sizeof view->seed_reason, "%s", result->reason);
    pool_look *l = calloc(1, sizeof *l);
    if (!l) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "out of memory");
        return POOL_ERROR;
    }
    pool_step step = POOL_NOT_POOLED; /* no failure names a test: the set decides alone */
    bool found = false;
    int rc = pool_of(p, set, &view->pool_id);
    if (rc == RT_OK && view->pool_id) rc = rt_pools_lock(p->pg, view->pool_id, &l->row, &found);
    if (rc != RT_OK || !found) goto out;
    /* What the set's runs show of the pooled test, on its member row. */
    if ((rc = record_runs(p, set, l->row.test)) != RT_OK) goto out;
    if (!strcmp(l->row.state, "decided")) {
        rt_verdict v = RT_VERDICT_UNDECIDED;
        if (!strcmp(l->row.verdict, "regression")) v = RT_VERDICT_REGRESSION;
        if (!strcmp(l->row.verdict, "intermittent")) v = RT_VERDICT_INTERMITTENT;
        take(result, v, l->row.reason);
        rc = rt_pg_commit(p->pg);
        step = POOL_DECIDED;
    } else {
        /* The settle window ends at its time, at the deadline, or when the push's other
         * tasks of the test's group have finished. */
        bool waiting = !l->row.settled && !l->row.past_deadline && !set->deadline, done = false;
        if (waiting && (rc = settle_done(p, l->row.id, l->row.project, l->row.revision,
                                         l->row.group_name, l->row.test, &done)) != RT_OK)
            goto out;
        if (waiting && !done) {
            rc = rt_pg_commit(p->pg); /* the sweep asks again when the window ends */
            step = POOL_WAIT;
        } else {
            if (waiting)
                rt_log_info("pooled set settled early: the push's tasks of its group finished",
                            "set_id", set->id_text, "test", l->row.test);
            rc = look(p, l, set, result, &step);
        }
    }
out:
    if (rt_pg_in_transaction(p->pg)) {
        int ignored = rt_pg_rollback(p->pg); /* after an error, or a pooled set not found */
        (void)ignored;
    }
    if (rc != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_REQUEUE, "the pooled set: %s / %s", rt_pg_errstr(p->pg),
                       rt_amqp_errstr(p->amqp));
        step = POOL_ERROR;
    }
    view->decided = step == POOL_DECIDED;
    free(l);
    return step;
}

int pool_flow_store(pool_flow *p, const pool_view *view, long long set_id)
{
    if (!view->decided || !view->pool_id) return RT_OK;
    return rt_pools_store_decision(p->pg, set_id, view->pool_id,
                                   rt_verdict_name(view->seed_verdict), view->seed_reason);
}

/* Asks retrig-decide to look at a pooled set through its opening member set. */
static int ask_look(pool_flow *p, long long pool_id, long long set_id, const char *project)
{
    rt_decide_request req = {.set_id = set_id, .attempt = 1};
    snprintf(req.project, sizeof req.project, "%s", project);
    snprintf(req.reason, sizeof req.reason, "pool-settled");
    char *body = rt_decide_request_build(&req);
    if (!body) return RT_ENOMEM;
    char message_id[64];
    snprintf(message_id, sizeof message_id, "decide-%lld-pool-%lld", set_id, pool_id);
    rt_amqp_publish_opts opts = {.message_id = message_id};
    int rc = rt_amqp_publish(p->amqp, p->cfg->amqp_namespace, "decide", body, strlen(body), &opts);
    free(body);
    return rc;
}

/* The pooled sets in their settle window whose push's tasks of the group have finished:
 * asked to look now rather than at settle_until. */
static void sweep_settling(pool_flow *p)
{
    rt_pool_settling *due = calloc(SWEEP_MAX, sizeof *due);
    size_t n = 0, asked = 0;
    int rc = due ? rt_pools_settling(p->pg, p->cfg->decide_sweep_interval_s, due, SWEEP_MAX, &n)
                 : RT_ENOMEM;
    for (size_t i = 0; i < n && rc == RT_OK; i++) {
        bool done = false;
        rc = settle_done(p, due[i].pool_id, due[i].project, due[i].revision, due[i].group_name,
                         due[i].test, &done);
        if (rc != RT_OK || !done || !due[i].set_id) continue;
        rc = ask_look(p, due[i].pool_id, due[i].set_id, due[i].project);
        if (rc == RT_OK) rc = rt_pools_woken(p->pg, due[i].pool_id);
        asked += rc == RT_OK;
    }
    free(due);
    if (rc != RT_OK) {
        rt_log_warn("settling pooled sets sweep failed; trying at the next one", "error",
                    rt_pg_errstr(p->pg));
    } else if (asked) {
        char count[24];
        snprintf(count, sizeof count, "%zu", asked);
        rt_log_info("pooled sets settled early: the push's tasks of their group finished",
                    "pooled_sets", count);
    }
}

void pool_flow_sweep(pool_flow *p)
{
    if (!p->on) return;
    rt_pool_due due[SWEEP_MAX];
    size_t n = 0;
    int rc = rt_pg_begin(p->pg);
    if (rc == RT_OK) rc = rt_pools_due(p->pg, p->cfg->decide_sweep_interval_s, due, SWEEP_MAX, &n);
    for (size_t i = 0; i < n && rc == RT_OK; i++)
        if (due[i].set_id) rc = ask_look(p, due[i].pool_id, due[i].set_id, due[i].project);
    if (rc == RT_OK) rc = rt_pg_commit(p->pg);
    if (rc != RT_OK) {
        if (rt_pg_in_transaction(p->pg)) {
            int ignored = rt_pg_rollback(p->pg);
            (void)ignored;
        }
        rt_log_warn("pooled sets sweep failed; trying at the next one", "error",
                    rt_pg_errstr(p->pg));
        return;
    }
    if (n) {
        char count[24];
        snprintf(count, sizeof count, "%zu", n);
        rt_log_info("pooled sets asked to look at their evidence", "pooled_sets", count);
    }
    sweep_settling(p);
}
