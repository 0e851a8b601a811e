/* SPDX-License-Identifier: MPL-2.0 */
/* flaky_issues.c - `retrig flaky-issues`: one issue per flaky test of a project, kept in
 * step with the test history. For every test that is flaky by the rule (failed on more
 * than history_flaky_min_branches branches or pull requests within
 * history_flaky_window_days, or on the main branch when flaky_issue_on_main) and every
 * test that has an issue, common/core/flaky_issue.h decides: create, update (the one figures
 * comment), close after flaky_issue_quiet_days without a failure, reopen, or nothing.
 * --dry-run (the default) prints the plan and changes nothing; --apply acts on the tracker
 * (flaky_issue_tracker: GitHub Issues or Bugzilla, common/issue_tracker.h) and records
 * each step in flaky_issues (migrations/0016_github.sql) right after it. Before creating,
 * the tracker is searched for the test's hidden marker, so a crash between creating and
 * recording, or a second run, never makes a second issue.
 *
 * Strangers cannot drive it: the rule must hold on trusted branches alone, the repository's
 * own and the fork pull requests whose author association is one of
 * flaky_issues_trusted_associations (migrations/0036_github_fork_trust.sql); other fork pull
 * requests are counted in the issue as evidence. At most flaky_issues_max_new issues are
 * opened per pass (the flakiest first); names are escaped in the terminal table. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/io/history_store.h"
#include "common/core/flaky_issue.h"
#include "common/core/github.h"
#include "common/issue_tracker.h"
#include "common/io/pg.h"
#include "common/store/flaky_issues.h"
#include "common/store/outcomes.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig flaky-issues --project OWNER/NAME [--dry-run | --apply]\n"
            "                           [--repo OWNER/NAME] [--tracker github|bugzilla]\n"
            "                           [--token-file F] [--now ISO-8601] [--format table|json]\n"
            "One issue per flaky test of the test history of --project: opened when the test\n"
            "becomes flaky (history_flaky_min_branches, history_flaky_window_days,\n"
            "flaky_issue_on_main), its figures comment edited while it stays flaky, closed\n"
            "after flaky_issue_quiet_days without a failure, reopened if it fails again.\n"
            "Only the repository's own branches and fork pull requests of trusted authors\n"
            "(flaky_issues_trusted_associations) count toward opening an issue; other fork\n"
            "pull requests are shown as evidence. At most flaky_issues_max_new issues are\n"
            "opened per pass.\n"
            "--dry-run (the default) prints what it would do; --apply does it on the tracker\n"
            "(flaky_issue_tracker: GitHub Issues of --repo, default the project, labelled\n"
            "flaky_issue_label; or Bugzilla) and records it. The GitHub token (issues: write)\n"
            "comes from --token-file, else github_token or github_token_file.\n"
            "Exit: 0 done, 1 failure, 2 usage.\n");
}

typedef struct plan_row {
    rt_flaky_figures fig;
    rt_flaky_state state;
    rt_flaky_action action;
    const char *reason;
    rt_tracker_issue issue;
    json_t *stored;
    json_t *fresh;
    char marker[RT_FLAKY_MARKER_SIZE];
    char *title;
    const char *done; /* what --apply did, NULL in a dry run */
    const char *held; /* "deferred" (flaky_issues_max_new), "forks" (flaky through forks only) */
} plan_row;

/* The figures of one candidate and the state of its test's issue; f's texts point into
 * the candidate, which outlives the plan. */
static void read_candidate(const rt_flaky_candidate *k, const rt_config *cfg, plan_row *p)
{
    rt_flaky_figures *f = &p->fig;
    f->test = k->test;
    f->window_days = cfg->history_flaky_window_days;
    f->runs = (long)k->runs;
    f->failures = (long)k->failures;
    f->failure_rate = k->failure_rate;
    f->branches = (long)k->branches;
    f->prs = (long)k->prs;
    f->main_failures = (long)k->main_failures;
    f->push_failure_chance = k->push_failure_chance;
    /* strangers cannot drive an issue: the rule must hold on the trusted branches alone */
    long trusted = 0;
    if (sscanf(k->trusted_fork_branches, "%ld %ld", &trusted, &f->fork_branches) != 2)
        trusted = f->fork_branches = 0;
    f->flaky = (k->flaky && trusted > cfg->history_flaky_min_branches) ||
               (cfg->flaky_issue_on_main && f->main_failures > 0);
    f->rerun_flips = (long)k->rerun_flips;
    f->last_failure = (time_t)k->last_failure;
    f->first_failure_time = k->first_failure_at;
    f->first_failure_branch = k->first_failure_branch;
    f->first_failure_revision = k->first_failure_revision;
    f->first_failure_url = k->first_failure_url;
    f->message = k->message;
    if (sscanf(k->prs_ran_failed, "%ld %ld", &f->prs_ran, &f->prs_failed) != 2)
        f->prs_ran = f->prs_failed = 0;
    const char *state = k->state;
    p->state = !state ? RT_FLAKY_NONE : !strcmp(state, "open") ? RT_FLAKY_OPEN : RT_FLAKY_CLOSED;
    if (state) {
        p->issue.number = k->issue_number;
        snprintf(p->issue.url, sizeof p->issue.url, "%s", k->issue_url);
        p->issue.comment_id = k->comment_id;
        p->issue.open = p->state == RT_FLAKY_OPEN;
        p->stored = json_loads(k->figures, 0, NULL);
    }
}

/* Records an issue's state after a step on the tracker. */
static int record(rt_pg *pg, const char *project, plan_row *p, const char *tracker,
                  const char *now_text)
{
    char *figures = json_dumps(p->fresh, JSON_COMPACT);
    if (!figures) return RT_ENOMEM;
    rt_flaky_issue_row row = {.project = project,
                              .test = p->fig.test,
                              .marker = p->marker,
                              .tracker = tracker,
                              .open = p->issue.open,
                              .number = p->issue.number,
                              .url = p->issue.url,
                              .comment_id = p->issue.comment_id,
                              .at = now_text,
                              .last_failure = (long long)p->fig.last_failure,
                              .figures = figures};
    int rc = rt_flaky_issue_record(pg, &row);
    if (rc != RT_OK) rt_log_error("cannot record the issue", "error", rt_pg_errstr(pg));
    free(figures);
    return rc;
}

/* Carries out one row's action; p->done says what happened. */
static int act(rt_tracker *tracker, rt_pg *pg, const char *project, plan_row *p, time_t now,
               const char *now_text, int quiet_days)
{
    const char *tname = tracker->ops->name;
    char when[32];
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
    int rc = RT_OK;
    char *text = NULL;
    if (p->action == RT_FLAKY_CREATE) {
        /* never two issues: the marker first, also after a crash between create and record */
        rc = tracker->ops->find(tracker, p->marker, &p->issue);
        if (rc == RT_OK) {
            p->done = p->issue.open ? "adopted" : "adopted-closed";
            rc = record(pg, project, p, tname, now_text);
            if (rc == RT_OK && !p->issue.open) {
                text = rt_flaky_reopen_comment(&p->fig);
                rc = text ? tracker->ops->reopen(tracker, &p->issue, text) : RT_ENOMEM;
                free(text);
                text = NULL;
                if (rc == RT_OK) p->done = "adopted-reopened";
            }
            if (rc == RT_OK) {
                text = rt_flaky_comment(&p->fig, when);
                rc = text ? tracker->ops->update(tracker, &p->issue, text) : RT_ENOMEM;
            }
        } else if (rc == RT_ENOTFOUND) {
            char *body = rt_flaky_body(&p->fig, p->marker);
            rc = body ? tracker->ops->create(tracker, p->fig.test, p->title, body, p->marker,
                                             &p->issue)
                      : RT_ENOMEM;
            free(body);
            if (rc == RT_OK) p->done = "created";
        }
    } else if (p->action == RT_FLAKY_UPDATE) {
        text = rt_flaky_comment(&p->fig, when);
        rc = text ? tracker->ops->update(tracker, &p->issue, text) : RT_ENOMEM;
        if (rc == RT_OK) p->done = "updated";
    } else if (p->action == RT_FLAKY_CLOSE) {
        text = rt_flaky_close_comment(&p->fig, quiet_days);
        rc = text ? tracker->ops->close(tracker, &p->issue, text) : RT_ENOMEM;
        if (rc == RT_OK) p->done = "closed";
    } else if (p->action == RT_FLAKY_REOPEN) {
        text = rt_flaky_reopen_comment(&p->fig);
        rc = text ? tracker->ops->reopen(tracker, &p->issue, text) : RT_ENOMEM;
        free(text);
        text = NULL;
        if (rc == RT_OK) {
            text = rt_flaky_comment(&p->fig, when);
            rc = text ? tracker->ops->update(tracker, &p->issue, text) : RT_ENOMEM;
        }
        if (rc == RT_OK) p->done = "reopened";
    }
    free(text);
    if (rc != RT_OK) {
        rt_log_error("the tracker refused a step", "test", p->fig.test, "action",
                     rt_flaky_action_name(p->action), "error", tracker->errstr);
        return rc;
    }
    return record(pg, project, p, tname, now_text);
}

/* Long because it is a linear sequence of steps that share cleanup through goto out: one case
 * per option and the checks between them, the query of the candidates and the plan for each, the
 * tracker calls under --apply, then the plan printed as JSON or as a table. */
int rt_cli_flaky_issues(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"project", required_argument, NULL, 'p'}, {"dry-run", no_argument, NULL, 'd'},
        {"apply", no_argument, NULL, 'a'},         {"repo", required_argument, NULL, 'r'},
        {"tracker", required_argument, NULL, 'T'}, {"token-file", required_argument, NULL, 't'},
        {"now", required_argument, NULL, 'n'},     {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    const char *project = NULL, *repo = NULL, *tracker_name = cfg->flaky_issue_tracker,
               *token_file = NULL, *now_arg = NULL;
    bool apply = false, dry_run = false, json = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "p:dar:T:t:n:f:h", options, NULL)) != -1) {
        switch (opt) {
        case 'p': project = optarg; break;
        case 'd': dry_run = true; break;
        case 'a': apply = true; break;
        case 'r': repo = optarg; break;
        case 'T':
            if (strcmp(optarg, "github") && strcmp(optarg, "bugzilla")) {
                rt_log_error("--tracker wants github or bugzilla", "value", optarg);
                return 2;
            }
            tracker_name = optarg;
            break;
        case 't': token_file = optarg; break;
        case 'n': now_arg = optarg; break;
        case 'f':
            if (rt__cli_format(optarg, &json)) return 2;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!project || optind < argc || (apply && dry_run)) {
        usage(stderr);
        return 2;
    }
    if (!repo) repo = project;
    if (!strcmp(tracker_name, "github") && !rt_gh_valid_repo(repo)) {
        rt_log_error("--repo (or --project) wants OWNER/NAME for GitHub Issues", "value", repo);
        return 2;
    }
    time_t now = time(NULL);
    if (now_arg && rt_gh_parse_time(now_arg, &now) != RT_OK) {
        rt_log_error("--now wants an ISO-8601 time such as 2024-05-01T10:00:00Z", "value", now_arg);
        return 2;
    }
    char now_text[32], until_text[32], window[32];
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(now_text, sizeof now_text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    time_t until = now / 86400 * 86400 + 86400;
    gmtime_r(&until, &tm);
    strftime(until_text, sizeof until_text, "%Y-%m-%dT00:00:00Z", &tm);
    snprintf(window, sizeof window, "%d days", cfg->history_flaky_window_days);
    char errstr[RT_ERRSTR_SIZE] = "";
    if (token_file) {
        if (rt__cli_token_file(cfg, token_file)) return 2;
    }

    int status = 1;
    rt_pg *pg = NULL;
    rt_tracker *tracker = NULL;
    rt_flaky_candidate *cands = NULL;
    size_t ncands = 0;
    plan_row *plan = NULL;
    rt_outcome_labels_list labels = {0};
    rt_test_variants variants = {0};
    int n = 0;
    json_t *out_rows = json_array();
    if (rt_pg_connect(&pg, cfg->database_url, "cli", errstr) != RT_OK) {
        rt_log_error("cannot connect to Postgres", "error", errstr);
        goto out;
    }
    /* The runs still queued for the rollup first (what a writer of the history does after
     * its batches): the window is read from the rollup. */
    if (rt_history_rollup(pg, 10000, NULL) != RT_OK) {
        rt_log_error("cannot bring the test history's rollup up to date", "error",
                     rt_pg_errstr(pg));
        goto out;
    }
    char trusted[512] = "";
    for (size_t i = 0; i < cfg->flaky_issues_trusted_associations.count; i++) {
        size_t used = strlen(trusted);
        snprintf(trusted + used, sizeof trusted - used, "%s%s", used ? "," : "",
                 cfg->flaky_issues_trusted_associations.items[i]);
    }
    if (rt_flaky_candidates(pg, project, now_text, window, cfg->history_flaky_min_branches,
                            until_text, trusted, &cands, &ncands) != RT_OK) {
        rt_log_error("cannot query the test history", "error", rt_pg_errstr(pg));
        goto out;
    }
    n = (int)ncands;
    if (rt_outcome_labels_read(pg, project, until_text, window, &labels) != RT_OK ||
        rt_test_variants_read(pg, project, until_text, window, &variants) != RT_OK) {
        rt_log_error("cannot query the test history", "error", rt_pg_errstr(pg));
        goto out;
    }
    int creates = 0, deferred = 0;
    if (n && !(plan = calloc((size_t)n, sizeof *plan))) goto out;
    for (int r = 0; r < n; r++) {
        plan_row *p = &plan[r];
        rt_flaky_figures *f = &p->fig;
        f->project = project;
        read_candidate(&cands[r], cfg, p);
        f->variants = rt_test_variants_of(&variants, f->test, &f->nvariants);
        f->variant_kind = variants.kind;
        const rt_outcome_labels *l = rt_outcome_labels_find(&labels, f->test);
        if (l) {
            f->outcome_flaky = l->flaky;
            f->outcome_disabled = l->disabled;
            f->outcome_collection_error = l->collection_error;
            f->outcome_build_failed = l->build_failed;
        }
        p->fresh = rt_flaky_figures_json(f);
        p->title = rt_flaky_title(f);
        if (!p->fresh || !p->title) goto out;
        rt_flaky_marker(project, f->test, p->marker);
        p->action =
            rt_flaky_decide(p->state, f->flaky, rt_flaky_figures_changed(p->stored, p->fresh),
                            f->last_failure, now, cfg->flaky_issue_quiet_days, &p->reason);
        if (p->state == RT_FLAKY_NONE && !f->flaky && cands[r].flaky) {
            p->reason = "flaky only through pull requests from forks: evidence, not counted";
            p->held = "forks";
        }
        /* the flakiest first (the query's order); the others wait for the next pass */
        if (p->action == RT_FLAKY_CREATE && creates++ >= cfg->flaky_issues_max_new) {
            p->action = RT_FLAKY_NOTHING;
            p->reason = "flaky, waiting: flaky_issues_max_new issues opened this pass";
            p->held = "deferred";
            deferred++;
        }
    }

    if (apply) {
        int rc = !strcmp(tracker_name, "github")
                     ? rt_tracker_github_new(&tracker, cfg, repo, cfg->github_token, errstr)
                     : rt_tracker_bugzilla_new(&tracker, cfg, errstr);
        if (rc != RT_OK) {
            rt_log_error("cannot reach the issue tracker", "tracker", tracker_name, "error",
                         errstr);
            status = rc == RT_ECONFIG ? 2 : 1;
            goto out;
        }
        for (int r = 0; r < n; r++) {
            if (plan[r].action == RT_FLAKY_NOTHING) continue;
            if (act(tracker, pg, project, &plan[r], now, now_text, cfg->flaky_issue_quiet_days) !=
                RT_OK)
                goto out;
        }
    }

    /* a matrix job's name says its OS (common/core/matrix_variant.h); a platform's is not read */
    bool matrix = !variants.kind || !strcmp(variants.kind, RT_VARIANT_KIND_GITHUB);
    int counts[5] = {0};
    for (int r = 0; r < n; r++) counts[plan[r].action]++;
    if (json) {
        for (int r = 0; r < n; r++) {
            plan_row *p = &plan[r];
            json_t *row =
                json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?, s:s, s:O}", "test", p->fig.test,
                          "action", rt_flaky_action_name(p->action), "reason", p->reason, "state",
                          p->state == RT_FLAKY_NONE   ? "none"
                          : p->state == RT_FLAKY_OPEN ? "open"
                                                      : "closed",
                          "issue_url", p->issue.url[0] ? p->issue.url : NULL, "done", p->done,
                          "title", p->title, "figures", p->fresh);
            const char *only = rt_flaky_only_variant(p->fig.variants, p->fig.nvariants);
            if (row && only) json_object_set_new(row, "only_variant", json_string(only));
            const char *only_os =
                matrix ? rt_flaky_only_os(p->fig.variants, p->fig.nvariants) : NULL;
            if (row && only_os) json_object_set_new(row, "only_os", json_string(only_os));
            if (!row || json_array_append_new(out_rows, row) != 0) goto out;
        }
        json_t *doc = json_pack("{s:s, s:b, s:s, s:i, s:O}", "project", project, "dry_run", !apply,
                                "tracker", tracker_name, "deferred", deferred, "tests", out_rows);
        char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) : NULL;
        json_decref(doc);
        if (!text) goto out;
        printf("%s\n", text);
        free(text);
    } else {
        printf("%s%s: %d to create, %d to update, %d to close, %d to reopen (%s)\n",
               apply ? "" : "dry run: ", project, counts[RT_FLAKY_CREATE], counts[RT_FLAKY_UPDATE],
               counts[RT_FLAKY_CLOSE], counts[RT_FLAKY_REOPEN], tracker_name);
        if (deferred)
            printf("%d more flaky tests wait for the next pass (flaky_issues_max_new %d)\n",
                   deferred, cfg->flaky_issues_max_new);
        printf("%-8s %-7s %5s %8s %5s %6s  %s\n", "ACTION", "STATE", "FAILS", "BRANCHES", "FLIPS",
               "ISSUE", "TEST");
        for (int r = 0; r < n; r++) {
            plan_row *p = &plan[r];
            if (p->action == RT_FLAKY_NOTHING && p->state == RT_FLAKY_NONE && !p->held) continue;
            char issue[24] = "-";
            if (p->issue.number) snprintf(issue, sizeof issue, "#%lld", p->issue.number);
            printf("%-8s %-7s %5ld %8ld %5ld %6s  %s\n",
                   p->done   ? p->done
                   : p->held ? p->held
                             : rt_flaky_action_name(p->action),
                   p->state == RT_FLAKY_NONE   ? "-"
                   : p->state == RT_FLAKY_OPEN ? "open"
                                               : "closed",
                   p->fig.failures, p->fig.branches, p->fig.rerun_flips, issue,
                   rt_cli_text(p->fig.test));
            if (!apply && p->action == RT_FLAKY_CREATE)
                printf("         would open: %s\n", rt_cli_text(p->title));
            const char *only = rt_flaky_only_variant(p->fig.variants, p->fig.nvariants);
            if (only) printf("         fails on one variant only: %s\n", rt_cli_text(only));
            const char *only_os =
                matrix ? rt_flaky_only_os(p->fig.variants, p->fig.nvariants) : NULL;
            if (only_os) printf("         fails on %s only\n", only_os);
        }
    }
    status = 0;
out:
    for (int r = 0; plan && r < n; r++) {
        json_decref(plan[r].stored);
        json_decref(plan[r].fresh);
        free(plan[r].title);
    }
    free(plan);
    rt_outcome_labels_free(&labels);
    rt_test_variants_free(&variants);
    json_decref(out_rows);
    rt_flaky_candidates_free(cands, ncands);
    rt_tracker_free(tracker);
    rt_pg_free(pg);
    return status;
}
