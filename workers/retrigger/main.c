/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-retrigger: Taskcluster's retrigger action for each retrigger request, and
 * Gecko's add-new-jobs for each culprit probe, exactly once.
 *
 * The worker's story: one work queue (<ns>.retrigger, with its delay queues) carries two
 * requests, told apart by their "kind" (common/core/messages.h): a retrigger set's round
 * (round.c: the set's retrigger action, under the set's lock, the intent recorded before the
 * call, an interrupted call looked up before any new one, the budget given back when the
 * round ends without a call) and a culprit search's probe (probe.c: add-new-jobs on one push
 * of the regression's window, its own budget claim under the same rules). Both check the
 * rendered hook call against the allow-list and sign it with the project's level's
 * credentials (hook.c); their statements are common/store/hook_calls.c's. A request that
 * cannot be read is dead-lettered with its reason. Single-threaded; run replicas for
 * throughput: the set's session lock keeps two replicas off one set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io/log.h"
#include "common/options.h"
#include "workers/retrigger/retrigger.h"

static void handle(void *ctx, rt_amqp *src, rt_amqp_message *m, rt_outcome *h)
{
    retrigger *w = ctx;
    (void)src;
    rt_retrigger_request req;
    char reason[RT_MESSAGE_REASON_SIZE];
    /* The queue also carries retrig-decide's culprit probes (probe.c). */
    rt_culprit_probe_request probe_req;
    int prc = rt_culprit_probe_request_parse(m->body, m->len, &probe_req, reason);
    if (prc == RT_OK) {
        retrigger_probe(w, &probe_req, h);
        return;
    }
    if (prc != RT_ENOTFOUND) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", reason);
        return;
    }
    if (rt_retrigger_request_parse(m->body, m->len, &req, reason) != RT_OK) {
        rt_outcome_set(h, RT_SETTLE_DEAD, "%s", reason);
        return;
    }
    retrigger_round(w, &req, h);
    rt_retrigger_request_free(&req);
}

/* The work queue with its delay queues, and its consumer. */
static int declare(void *ctx, const rt_worker_conns *conns)
{
    retrigger *w = ctx;
    const rt_config *cfg = w->cfg;
    rt_amqp_work_queue queues[] = {{w->queue, "retrigger", w->delays, w->ndelays}};
    int rc = rt_worker_declare_queues(conns->broker, cfg, queues, 1);
    if (rc == RT_OK) rc = rt_amqp_consume(conns->broker, w->queue);
    return rc;
}

static int setup(retrigger *w, rt_config *cfg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc;
    w->cfg = cfg;
    for (size_t i = 0; i < cfg->retry_delays_ms.count && i < RETRIGGER_MAX_DELAYS; i++)
        w->delays[w->ndelays++] = atoi(cfg->retry_delays_ms.items[i]);
    snprintf(w->queue, sizeof w->queue, "%s.retrigger", cfg->amqp_namespace);
    if (rt_worker_needs_taskcluster(cfg)) return RT_ECONFIG;
    rt_http_options hopts;
    rt_http_options_from_config(&hopts, cfg);
    if ((rc = rt_http_new(&w->http, &hopts, errstr)) != RT_OK) return rc;
    hopts.max_attempts = 1;
    if ((rc = rt_http_new(&w->http_post, &hopts, errstr)) != RT_OK) return rc;
    rt_worker_setup connect = {
        "retrigger",     RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_POSTGRES, 0, 1, declare, w,
        &rt_worker_redis};
    if ((rc = rt_worker_connect(cfg, &connect, &w->conns)) != RT_OK) return rc;
    w->amqp = w->conns.broker;
    w->redis = w->conns.redis;
    w->pg = w->conns.pg;
    return RT_OK;
}

static void teardown(retrigger *w)
{
    rt_worker_disconnect(&w->conns);
    rt_http_free(w->http);
    rt_http_free(w->http_post);
    for (size_t i = 0; i < RETRIGGER_ACTIONS_CACHE; i++) rt_actions_free(w->cache[i].actions);
}

static int run(rt_config *cfg)
{
    retrigger w = {0};
    int rc = setup(&w, cfg);
    if (rc == RT_OK) {
        rt_log_info("consuming", "queue", w.queue, "dry_run", cfg->dry_run ? "true" : "false");
        rt_worker_settler settler = {w.amqp, w.queue, w.delays, w.ndelays, NULL, NULL};
        rt_worker_loop loop = {.cfg = cfg,
                               .conns = &w.conns,
                               .lanes = 1,
                               .apply_reloads = true,
                               .sources = {w.amqp, NULL},
                               .settler = &settler,
                               .ctx = &w,
                               .handle = handle};
        rt_worker_consume(&loop);
        rt_log_info("stopping: finished the request in hand");
    }
    teardown(&w);
    return rt_worker_exit_status(rc);
}

static int check(rt_config *cfg)
{
    int failures = rt_worker_check_services(
        cfg, "retrigger", RT_WORKER_NEEDS_BROKER | RT_WORKER_NEEDS_POSTGRES, &rt_worker_redis);
    failures += rt_worker_needs_taskcluster(cfg);
    return rt_worker_check_result(failures);
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = {
        "retrigger",
        "Consumes retrigger requests and triggers the push's retrigger action in Taskcluster\n"
        "(hooks.triggerHook with Hawk authentication), exactly once per set.",
        run,
        check,
    };
    return rt_worker_main(&def, argc, argv);
}
