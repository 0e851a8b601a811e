/* SPDX-License-Identifier: MPL-2.0 */
/* decisions.c - `retrig decisions` lists the verdicts retrig-decide stored, and
 * `retrig explain <taskId>` tells the whole story of one retrigger set: the failure and
 * how retrig-classify judged it, the retrigger action, each retrigger and its state, the
 * lines compared and the verdict, with the times. Read-only: the sheriff role suffices. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/core/ids.h"
#include "common/io/pg.h"
#include "common/store/decisions.h"

static void decisions_usage(FILE *out)
{
    fprintf(out, "usage: retrig decisions [--since DURATION] [--project P] [--verdict V]\n"
                 "                        [--format table|json]\n"
                 "       retrig decisions --estimate-prior [--since 30d] [--project P]\n"
                 "                        [--format table|json]\n"
                 "Lists the decisions of retrig-decide, newest first (at most 1000): DURATION is\n"
                 "a number and a unit, s, m, h or d (default 24h); V is regression, intermittent,\n"
                 "infra or undecided.\n"
                 "--estimate-prior estimates decide_prior_regression from the decisions of the\n"
                 "window (default 30d): the mean p_regression of the regressions and\n"
                 "intermittents decided (stored under either policy), one EM step from the\n"
                 "prior in force; run it again after a while to let it settle.\n"
                 "Exit: 0 listed, 1 database error, 2 usage.\n");
}

/* The mean posterior over past failures is the EM update of the prior share of regressions:
 * with a calibrated model it converges to the share the data imply, where the share of
 * regression verdicts would carry the policy's errors (the seed rule's false regressions).
 * The estimate is kept within [0.01, 0.5], as the model's prior is. */
static int estimate_prior(rt_pg *pg, const char *since, const char *project, bool json,
                          double current)
{
    rt_decisions_prior prior;
    if (rt_decisions_prior_read(pg, since, project, &prior) != RT_OK) {
        rt__cli_db_error(pg, "cannot read the decisions");
        return 1;
    }
    long long decided = prior.decided, regressions = prior.regressions;
    long long with = prior.with_posterior;
    double mean = prior.mean_posterior;
    double estimate = mean < 0.01 ? 0.01 : mean > 0.5 ? 0.5 : mean;
    if (json) {
        json_t *o =
            json_pack("{s:s, s:s?, s:I, s:I, s:I, s:f}", "since", since, "project", project,
                      "decided", (json_int_t)decided, "regressions", (json_int_t)regressions,
                      "with_posterior", (json_int_t)with, "current", current);
        if (o && with > 0) {
            json_object_set_new(o, "mean_posterior", json_real(mean));
            json_object_set_new(o, "estimate", json_real(estimate));
        }
        char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
        json_decref(o);
        if (!text) return 1;
        printf("%s\n", text);
        free(text);
        return 0;
    }
    printf("decisions in the last %s%s%s: %lld regressions and intermittents, %lld regressions "
           "(%.1f%%)\n",
           since, project ? " of " : "", project ? rt_cli_text(project) : "", decided, regressions,
           decided ? 100.0 * (double)regressions / (double)decided : 0.0);
    if (with == 0) {
        printf("none has a p_regression yet (decided before migration 0024): no estimate; "
               "decide_prior_regression stays %.3f\n",
               current);
        return 0;
    }
    printf("mean p_regression over %lld of them: %.3f\n", with, mean);
    printf("decide_prior_regression = %.3f   (now %.3f; the mean posterior, one EM step: run "
           "this again after a while)\n",
           estimate, current);
    return 0;
}

/* "24h" -> "24 hours"; false when malformed. */
static bool parse_since(const char *text, char *out, size_t size)
{
    char *end = NULL;
    long n = strtol(text, &end, 10);
    if (end == text || n < 0 || n > 100000 || !end[0] || end[1]) return false;
    const char *unit = *end == 's'   ? "seconds"
                       : *end == 'm' ? "minutes"
                       : *end == 'h' ? "hours"
                       : *end == 'd' ? "days"
                                     : NULL;
    if (!unit) return false;
    snprintf(out, size, "%ld %s", n, unit);
    return true;
}

static int db_connect(rt_config *cfg, rt_pg **pg) { return rt__cli_connect(cfg, "cli", pg); }

/* A text of the store, printable ("-" for NULL). */
static const char *cell(const char *text) { return rt_cli_text(text); }

/* The verdict policy's record of a listed decision (migration 0024) into o, what is set. */
static void policy_json(json_t *o, const rt_decision_listed *d)
{
    static const char *const names[] = {
        "policy", "p_regression", "prior_runs",    "prior_failures", "prior_signature_failures",
        "rounds", "retriggers",   "shadow_policy", "shadow_verdict", "shadow_reason"};
    const char *const values[] = {d->policy,
                                  d->p_regression,
                                  d->prior_runs,
                                  d->prior_failures,
                                  d->prior_signature_failures,
                                  d->rounds,
                                  d->retriggers,
                                  d->shadow_policy,
                                  d->shadow_verdict,
                                  d->shadow_reason};
    for (int k = 0; o && k < 10; k++) {
        const char *v = values[k];
        if (!v) continue;
        json_t *value = k == 1             ? json_real(atof(v))
                        : k >= 2 && k <= 6 ? json_integer(atoll(v))
                                           : json_string(v);
        json_object_set_new(o, names[k], value);
    }
}

/* The decisions listed as JSON objects (with the culprit search and the verdict policy when
 * recorded). */
static void print_decisions_json(const rt_decision_listed *rows, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const rt_decision_listed *d = &rows[i];
        json_t *o =
            json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "set_id",
                      (json_int_t)d->set_id, "decided_at", d->decided_at, "verdict", d->verdict,
                      "reason", d->reason, "project", d->project, "revision", d->revision, "label",
                      d->label, "platform", d->platform, "original_task_id", d->original_task_id,
                      "reproduced_max", atoi(d->reproduced_max), "compared", atoi(d->compared));
        if (o && d->classification_id)
            json_object_set_new(o, "classification_id", json_integer(atoi(d->classification_id)));
        if (o && d->culprit_status)
            json_object_set_new(o, "culprit",
                                json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?}", "status",
                                          d->culprit_status, "reason", d->culprit_reason,
                                          "revision", d->culprit_revision, "range_first",
                                          d->culprit_range_first, "range_last",
                                          d->culprit_range_last, "url", d->culprit_url));
        policy_json(o, d);
        json_array_append_new(list, o);
    }
    char *text = json_dumps(list, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    json_decref(list);
    if (text) printf("%s\n", text);
    free(text);
}

/* The decisions listed as a table of thirteen columns. */
static void print_decisions_table(const rt_decision_listed *rows, size_t n)
{
    printf("%-20s  %-12s  %-22s  %-10s  %-12s  %-5s  %-8s  %-5s  %-5s  %-12s  %-22s  %-21s  "
           "%s\n",
           "DECIDED_AT", "VERDICT", "REASON", "PROJECT", "REVISION", "REPRO", "POLICY", "P_REG",
           "RD/RT", "SHADOW", "ORIGINAL_TASK", "CULPRIT", "LABEL");
    for (size_t i = 0; i < n; i++) {
        const rt_decision_listed *d = &rows[i];
        /* The culprit search: the culprit's revision once found, else its status. */
        char culprit[64] = "-";
        if (d->culprit_revision)
            snprintf(culprit, sizeof culprit, "%.12s", d->culprit_revision);
        else if (d->culprit_status)
            snprintf(culprit, sizeof culprit, "%.21s", d->culprit_status);
        /* The verdict policy (migration 0024): p_regression, rounds/retriggers asked for. */
        char p[16] = "-", spent[24] = "-";
        if (d->p_regression) snprintf(p, sizeof p, "%.3f", atof(d->p_regression));
        if (d->rounds && d->retriggers)
            snprintf(spent, sizeof spent, "%s/%s", d->rounds, d->retriggers);
        printf("%-20s  %-12s  %-22s  %-10s  %-12.12s  %2s/%-2s  %-8s  %-5s  %-5s  %-12s  %-22s  "
               "%-21s  %s\n",
               cell(d->decided_at), cell(d->verdict), cell(d->reason), cell(d->project),
               cell(d->revision), cell(d->reproduced_max), cell(d->compared), cell(d->policy), p,
               spent, cell(d->shadow_verdict), cell(d->original_task_id), rt_cli_text(culprit),
               cell(d->label));
    }
}

/* One case per option with its check, then the decisions printed as JSON or as a table. */
int rt_cli_decisions(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"since", required_argument, NULL, 's'},
        {"project", required_argument, NULL, 'p'},
        {"verdict", required_argument, NULL, 'v'},
        {"format", required_argument, NULL, 'f'},
        {"estimate-prior", no_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char since[64] = "";
    const char *project = NULL, *verdict = NULL;
    bool json = false, prior = false;
    int c;
    while ((c = getopt_long(argc, argv, "s:p:v:f:eh", options, NULL)) != -1) {
        switch (c) {
        case 'e': prior = true; break;
        case 's':
            if (!parse_since(optarg, since, sizeof since)) {
                rt_log_error("--since wants a number and s, m, h or d", "value", optarg);
                return 2;
            }
            break;
        case 'p': project = optarg; break;
        case 'v':
            if (strcmp(optarg, "regression") && strcmp(optarg, "intermittent") &&
                strcmp(optarg, "infra") && strcmp(optarg, "undecided")) {
                rt_log_error("--verdict is regression, intermittent, infra or undecided", "value",
                             optarg);
                return 2;
            }
            verdict = optarg;
            break;
        case 'f':
            if (rt__cli_format(optarg, &json)) return 2;
            break;
        case 'h': decisions_usage(stdout); return 0;
        default: decisions_usage(stderr); return 2;
        }
    }
    if (optind < argc || (prior && verdict)) {
        decisions_usage(stderr);
        return 2;
    }
    if (!since[0]) snprintf(since, sizeof since, "%s", prior ? "30 days" : "24 hours");
    rt_pg *pg = NULL;
    if (db_connect(cfg, &pg)) return 1;
    if (prior) {
        int rc = estimate_prior(pg, since, project, json, cfg->decide_prior_regression);
        rt_pg_free(pg);
        return rc;
    }
    rt_decision_listed *rows = NULL;
    size_t n = 0;
    int status = 1;
    if (rt_decisions_list(pg, since, project, verdict, &rows, &n) != RT_OK) {
        rt__cli_db_error(pg, "cannot read the decisions");
    } else {
        if (json)
            print_decisions_json(rows, n);
        else
            print_decisions_table(rows, n);
        status = 0;
    }
    rt_decision_listed_free(rows, n);
    rt_pg_free(pg);
    return status;
}

static long long int_of(json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* The line's cross-branch history at decision time (lines[].history). */
static void print_history(json_t *history)
{
    if (!json_is_object(history)) return;
    printf("      history (%lld days, other pushes): failed on %lld push(es) (%lld on main, %lld "
           "with this signature), %lld branch(es) under review, %lld PR(s); %lld failure(s) in "
           "%lld run(s)%s\n",
           int_of(history, "window_days"), int_of(history, "pushes"),
           int_of(history, "main_pushes"), int_of(history, "same_signature_pushes"),
           int_of(history, "branches"), int_of(history, "prs"), int_of(history, "failures"),
           int_of(history, "runs"),
           json_is_true(json_object_get(history, "flaky")) ? "; FLAKY" : "");
    static const char *const firsts[][2] = {
        {"first_failure", "first failed"},
        {"first_failure_same_signature", "first failed with this signature"}};
    for (size_t i = 0; i < 2; i++) {
        json_t *first = json_object_get(history, firsts[i][0]);
        if (!json_is_object(first)) continue;
        const char *sig = json_string_value(json_object_get(first, "signature"));
        printf("      %s %s on %s push %s (%s)%s%s\n", firsts[i][1],
               rt_cli_text(json_string_value(json_object_get(first, "at"))),
               rt_cli_text(json_string_value(json_object_get(first, "project"))),
               rt_cli_text(json_string_value(json_object_get(first, "push"))),
               json_is_string(json_object_get(first, "revision"))
                   ? rt_cli_text(json_string_value(json_object_get(first, "revision")))
                   : "-",
               sig ? ": " : "", sig ? rt_cli_text(sig) : "");
    }
}

static void print_lines(json_t *evidence)
{
    size_t i;
    json_t *line;
    json_t *lines = json_object_get(evidence, "lines");
    if (!json_array_size(lines)) printf("  (no failure line of the original to compare)\n");
    json_array_foreach(lines, i, line)
    {
        printf("  [%lld reproduced] %s\n",
               (long long)json_integer_value(json_object_get(line, "reproduced")),
               rt_cli_text(json_string_value(json_object_get(line, "line"))));
        size_t k;
        json_t *by;
        json_array_foreach(json_object_get(line, "reproduced_by"), k, by)
            printf("      by %s\n", rt_cli_text(json_string_value(by)));
        print_history(json_object_get(line, "history"));
        json_t *model = json_object_get(line, "model");
        if (json_is_number(json_object_get(line, "p_regression")) && json_is_object(model)) {
            long long sig = int_of(model, "signature_failures");
            char sig_text[64] = "";
            if (sig >= 0) snprintf(sig_text, sizeof sig_text, ", %lld with this signature", sig);
            printf(
                "      p_regression %.3f (prior: %lld failure(s) in %lld run(s) of its test%s)\n",
                json_number_value(json_object_get(line, "p_regression")), int_of(model, "failures"),
                int_of(model, "runs"), sig_text);
        }
    }
    json_array_foreach(json_object_get(evidence, "tracked"), i, line)
        printf("  [dropped: single tracking bug %lld] %s\n",
               (long long)json_integer_value(json_object_get(line, "bug")),
               rt_cli_text(json_string_value(json_object_get(line, "line"))));
}

/* decide_policy = pooled: the pooled verdict the decision took, with every configuration's
 * evidence in one table (evidence.pool, stored by retrig-decide's pool_flow.c). */
static void print_pool(json_t *evidence, long long set_id)
{
    json_t *pool = json_object_get(evidence, "pool");
    if (!json_is_object(pool)) return;
    printf("\nthe pooled verdict (pooled set %lld: %s on every configuration of the push)\n",
           int_of(pool, "pool_id"), rt_cli_text(json_string_value(json_object_get(pool, "test"))));
    printf("  %s (%s), p_regression %.3f; %lld round(s), %lld retrigger(s) asked for\n",
           rt_cli_text(json_string_value(json_object_get(pool, "verdict"))),
           rt_cli_text(json_string_value(json_object_get(pool, "reason"))),
           json_number_value(json_object_get(pool, "p_regression")), int_of(pool, "rounds"),
           int_of(pool, "retriggers"));
    printf("  %-40s %-8s %10s %10s %7s\n", "config", "push run", "retriggers", "reproduced",
           "pending");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(pool, "configs"), i, c)
    {
        json_t *set = json_object_get(c, "set_id");
        const char *mark = !json_is_integer(set)               ? ""
                           : json_integer_value(set) == set_id ? "  <- this set"
                                                               : "  (a failing task's set)";
        printf("  %-40s %-8s %10lld %10lld %7lld%s\n",
               rt_cli_text(json_string_value(json_object_get(c, "config"))),
               rt_cli_text(json_string_value(json_object_get(c, "push_run"))),
               int_of(c, "retriggers"), int_of(c, "reproduced"), int_of(c, "pending"), mark);
    }
    json_t *seed = json_object_get(pool, "seed");
    if (json_is_object(seed))
        printf("  the seed rule on this task's own runs: %s (%s)\n",
               rt_cli_text(json_string_value(json_object_get(seed, "verdict"))),
               rt_cli_text(json_string_value(json_object_get(seed, "reason"))));
}

/* The culprit search of a regression. */
static void print_culprit(const rt_explain_culprit *c)
{
    printf("\nthe culprit search (started %s)\n  %s (%s)\n", cell(c->started_at), cell(c->status),
           cell(c->reason));
    if (strcmp(c->revision, "-"))
        printf("  culprit %s, pushlog %s, by %s\n  %s\n", cell(c->revision), cell(c->pushlog_id),
               cell(c->author), cell(c->url));
    else if (strcmp(c->range_first, "-"))
        printf("  the culprit is within %s .. %s\n", cell(c->range_first), cell(c->range_last));
    printf("  window: %s push(es); %s probe(s), %s job(s) spent\n", cell(c->window_pushes),
           cell(c->probes), cell(c->jobs_spent));
    /* The window keeps its last round's probe after the search ends: only a search under way
     * has a next probe. */
    if (!strcmp(c->status, "searching") && c->next_revision[0])
        printf("  next probe: %s, %s run(s)\n", cell(c->next_revision), cell(c->next_times));
}

/* The verdict policy's record of the decision (migration 0024): the policy in force,
 * p_regression and the history it used, the rounds and retriggers, the other policy's
 * verdict on the same evidence. Nothing for decisions stored before it. */
static void print_policy(rt_pg *pg, long long set_id)
{
    rt_explain_policy *rows = NULL;
    size_t n = 0;
    if (rt_explain_policy_read(pg, set_id, &rows, &n) == RT_OK && n == 1 &&
        strcmp(rows[0].policy, "-")) {
        const rt_explain_policy *p = &rows[0];
        printf("  policy %s: p_regression %s (prior: %s failure(s) in %s run(s) of the test, %s "
               "with this signature); %s round(s), %s retrigger(s) asked for\n",
               cell(p->policy), cell(p->p_regression), cell(p->prior_failures), cell(p->prior_runs),
               cell(p->prior_signature_failures), cell(p->rounds), cell(p->retriggers));
        printf("  %s would say: %s (%s)\n", cell(p->shadow_policy), cell(p->shadow_verdict),
               cell(p->shadow_reason));
    }
    rt_explain_policy_free(rows, n);
}

/* The set and its original run. */
static int print_set(rt_pg *pg, long long set_id)
{
    rt_explain_set *rows = NULL, none = {0};
    size_t n = 0;
    if (rt_explain_set_read(pg, set_id, &rows, &n) != RT_OK) return RT_EDB;
    const rt_explain_set *s = n == 1 ? &rows[0] : &none;
    printf("retrigger set %lld: %s %s\n  label    %s\n  platform %s\n  status   %s (created %s)\n",
           set_id, cell(s->project), cell(s->revision), cell(s->label), cell(s->platform),
           cell(s->status), cell(s->created_at));
    printf("\nthe failure\n  original %s run %s: %s on %s, resolved %s, seen %s\n",
           cell(s->original_task_id), cell(s->original_run_id), cell(s->state),
           cell(s->task_queue_id), cell(s->resolved_at), cell(s->first_seen_at));
    printf("  retrig-classify: %s (%s)\n  failing groups: %s\n", cell(s->verdict),
           cell(s->verdict_reason), cell(s->failing_groups));
    printf("  asked for %s retriggers; request published %s\n", cell(s->retrigger_count),
           cell(s->request_published_at));
    rt_explain_set_free(rows, n);
    return RT_OK;
}

/* Later rounds (decide_policy = adaptive): asked for by retrig-decide. */
static int print_rounds(rt_pg *pg, long long set_id)
{
    rt_explain_round *rows = NULL;
    size_t n = 0;
    if (rt_explain_rounds(pg, set_id, &rows, &n) != RT_OK) return RT_EDB;
    for (size_t i = 0; i < n; i++) {
        const rt_explain_round *r = &rows[i];
        if (r->refused)
            printf("  round %s: %s wanted, refused by the budget (p_regression %s, %s)\n",
                   cell(r->round), cell(r->wanted), cell(r->p_regression), cell(r->requested_at));
        else
            printf("  round %s: asked for %s more retriggers of %s wanted (p_regression %s, %s); "
                   "request published %s\n",
                   cell(r->round), cell(r->retriggers), cell(r->wanted), cell(r->p_regression),
                   cell(r->requested_at), cell(r->published_at));
    }
    rt_explain_round_free(rows, n);
    return RT_OK;
}

static int print_actions(rt_pg *pg, long long set_id)
{
    rt_explain_action *rows = NULL;
    size_t n = 0;
    if (rt_explain_actions(pg, set_id, &rows, &n) != RT_OK) return RT_EDB;
    printf("\nthe retrigger action\n");
    if (n == 0) printf("  none recorded yet\n");
    for (size_t i = 0; i < n; i++) {
        const rt_explain_action *a = &rows[i];
        printf("  %s%s%s%s: %s%s, action task %s, %s attempt(s), intent %s, finished %s%s%s\n",
               n > 1 ? "round " : "", n > 1 ? cell(a->round) : "", n > 1 ? " " : "",
               cell(a->action_name), cell(a->outcome), a->dry_run ? " (dry run)" : "",
               cell(a->action_task_id), cell(a->attempts), cell(a->intent_at), cell(a->finished_at),
               a->error[0] ? "; error: " : "", cell(a->error));
    }
    rt_explain_action_free(rows, n);
    return RT_OK;
}

/* requested: a retrigger retrig asked for; found: a run of the label already on the push
 * when the set was made. */
static int print_members(rt_pg *pg, long long set_id, const char *task_id)
{
    rt_explain_member *rows = NULL;
    size_t n = 0;
    if (rt_explain_members(pg, set_id, &rows, &n) != RT_OK) return RT_EDB;
    printf("\nthe runs compared (%zu seen)\n", n);
    for (size_t i = 0; i < n; i++) {
        const rt_explain_member *m = &rows[i];
        printf("  %-9s %s run %s: %-9s -> %-13s resolved %s  (classify: %s)%s\n",
               !strcmp(m->role, "retrigger") ? "requested" : rt_cli_text(m->role), cell(m->task_id),
               cell(m->run_id), cell(m->state), cell(m->result), cell(m->resolved_at),
               cell(m->classification), !strcmp(m->task_id, task_id) ? "  <- asked about" : "");
    }
    rt_explain_member_free(rows, n);
    return RT_OK;
}

/* The verdict with its evidence, the verdict policy and the times, then the culprit search. */
static int print_verdict(rt_pg *pg, long long set_id)
{
    rt_explain_decision *rows = NULL;
    size_t n = 0;
    if (rt_explain_decision_read(pg, set_id, &rows, &n) != RT_OK) return RT_EDB;
    printf("\nthe verdict\n");
    if (n == 0) {
        printf("  not decided yet\n");
        rt_explain_decision_free(rows, n);
        return RT_OK;
    }
    const rt_explain_decision *v = &rows[0];
    json_t *evidence = json_loads(v->evidence, 0, NULL);
    json_t *counts = json_object_get(evidence, "counts");
    printf("  %s (%s), threshold %lld; classification %s when decided\n", cell(v->verdict),
           cell(v->reason), (long long)json_integer_value(json_object_get(evidence, "threshold")),
           cell(v->classification_id));
    printf("  retriggers: %lld compared (%lld passed, %lld failed), %lld exception, %lld "
           "without "
           "data, %lld pending\n",
           (long long)json_integer_value(json_object_get(counts, "compared")),
           (long long)json_integer_value(json_object_get(counts, "passed")),
           (long long)json_integer_value(json_object_get(counts, "failed")),
           (long long)json_integer_value(json_object_get(counts, "exceptions")),
           (long long)json_integer_value(json_object_get(counts, "no_data")),
           (long long)json_integer_value(json_object_get(counts, "pending")));
    printf("  lines of the original compared:\n");
    print_lines(evidence);
    print_policy(pg, set_id);
    print_pool(evidence, set_id);
    json_t *cancelled = json_object_get(evidence, "cancelled");
    if (cancelled)
        printf(
            "  cancelled %lld pending retrigger(s), ~%lld s of task time saved\n",
            (long long)json_integer_value(json_object_get(cancelled, "count")),
            (long long)json_integer_value(json_object_get(cancelled, "estimated_seconds_saved")));
    printf("\nthe times\n  failure seen           %s\n  retriggers requested   %s\n"
           "  decided                %s  (%s s after the failure was seen)\n",
           cell(v->failure_seen_at), cell(v->retriggers_requested_at), cell(v->decided_at),
           cell(v->seconds_to_decide));
    json_decref(evidence);
    rt_explain_decision_free(rows, n);
    rt_explain_culprit *culprit = NULL;
    size_t nculprit = 0;
    if (rt_explain_culprit_read(pg, set_id, &culprit, &nculprit) != RT_OK) return RT_EDB;
    if (nculprit == 1) print_culprit(&culprit[0]);
    rt_explain_culprit_free(culprit, nculprit);
    return RT_OK;
}

/* The story one section at a time: the set, its later rounds, the retrigger action, the runs
 * compared, the verdict with its evidence and the culprit search. */
int rt_cli_explain(int argc, char **argv, rt_config *cfg)
{
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc == 2 ? stdout : stderr,
                "usage: retrig explain TASK_ID\n"
                "The whole story of the retrigger set of a task (its original failed task or\n"
                "any of its retriggers): the failure and retrig-classify's verdict, the\n"
                "retrigger action, each retrigger and its state, the failure lines compared,\n"
                "the verdict and its times. Exit: 0 told, 1 no such set or database error,\n"
                "2 usage.\n");
        return argc == 2 ? 0 : 2;
    }
    const char *task_id = argv[1];
    if (!rt_valid_task_id(task_id)) {
        rt_log_error("not a Taskcluster task id", "task_id", task_id);
        return 2;
    }
    rt_pg *pg = NULL;
    if (db_connect(cfg, &pg)) return 1;
    int status = 1;
    long long set_id = 0;
    bool found = false;
    if (rt_decisions_find_set(pg, task_id, &set_id, &found) != RT_OK) goto dberror;
    if (!found) {
        fprintf(stderr, "no retrigger set knows task %s\n", task_id);
        goto out;
    }
    if (print_set(pg, set_id) != RT_OK || print_rounds(pg, set_id) != RT_OK ||
        print_actions(pg, set_id) != RT_OK || print_members(pg, set_id, task_id) != RT_OK ||
        print_verdict(pg, set_id) != RT_OK)
        goto dberror;
    status = 0;
    goto out;
dberror:
    rt__cli_db_error(pg, "cannot read the set");
out:
    rt_pg_free(pg);
    return status;
}
