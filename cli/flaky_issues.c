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
#include "common/store/outcomes.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* $1 project, $2 now, $3 window, $4 min branches, $5 the window's end: the end of now's UTC
 * day, so that the window is whole days, read from the rollup (as `retrig flakes` reads it;
 * a window ending at now reads the raw rows, which took minutes at 50 million outcomes);
 * $6 the trusted author associations, comma-separated. trusted_fork_branches: the branches
 * (pull requests) with a failure in the window that count toward opening an issue, and
 * those that do not (fork pull requests of authors not trusted: github_fork_runs). */
// clang-format off
static const char SQL_CANDIDATES[] =
    "WITH f AS (SELECT * FROM history_flakes($1, $5::timestamptz - $3::interval,"
    "                 $5::timestamptz, false, $4::integer, $3::interval)),"
    " m AS (SELECT test, failures FROM history_flakes($1, $5::timestamptz - $3::interval,"
    "                 $5::timestamptz, true, $4::integer, $3::interval)),"
    " t AS (SELECT test FROM f UNION SELECT test FROM flaky_issues WHERE project = $1)"
    " SELECT t.test, coalesce(f.runs, 0) AS runs, coalesce(f.failures, 0) AS failures,"
    "        coalesce(f.failure_rate, 0) AS failure_rate, coalesce(f.branches, 0) AS branches,"
    "        coalesce(f.prs, 0) AS prs, coalesce(m.failures, 0) AS main_failures,"
    "        coalesce(f.push_failure_chance, 0) AS push_failure_chance,"
    "        coalesce(f.flaky, false) AS flaky,"
    "        (SELECT count(*) FROM github_rerun_flips x WHERE x.repository = $1"
    "           AND x.test = t.test AND x.failed_at >= $5::timestamptz - $3::interval"
    "           AND x.failed_at <= $2::timestamptz) AS rerun_flips,"
    "        (SELECT extract(epoch FROM max(r.run_at))::bigint FROM history_tests ht"
    "           JOIN history_runs r ON r.id = ht.run_id WHERE r.repository = $1"
    "           AND ht.test = t.test AND ht.failed AND r.run_at <= $2::timestamptz)"
    "          AS last_failure,"
    "        " TS("f.first_failure_at") " AS first_failure_at, f.first_failure_branch,"
    "        f.first_failure_revision,"
    "        (SELECT g.html_url FROM github_runs g WHERE g.repository = $1"
    "           AND g.head_sha = f.first_failure_revision ORDER BY g.run_started_at LIMIT 1)"
    "          AS first_failure_url,"
    "        (SELECT ht.message FROM history_tests ht JOIN history_runs r ON r.id = ht.run_id"
    "           WHERE r.repository = $1 AND ht.test = t.test AND ht.failed"
    "             AND r.run_at <= $2::timestamptz ORDER BY r.run_at DESC LIMIT 1) AS message,"
    "        fi.state, fi.issue_number, fi.issue_url, fi.comment_id, fi.figures::text AS figures,"
    "        (SELECT count(DISTINCT r.branch_key) || ' ' ||"
    "                count(DISTINCT r.branch_key) FILTER (WHERE ht.failed)"
    "           FROM history_tests ht JOIN history_runs r ON r.id = ht.run_id"
    "          WHERE r.repository = $1 AND ht.test = t.test AND r.branch_class = 'other'"
    "            AND r.run_at >= $5::timestamptz - $3::interval AND r.run_at < $5::timestamptz)"
    "          AS prs_ran_failed,"
    "        (SELECT count(DISTINCT r.branch_key) FILTER (WHERE x.history_run_id IS NULL) || ' ' ||"
    "                count(DISTINCT r.branch_key) FILTER (WHERE x.history_run_id IS NOT NULL)"
    "           FROM history_tests ht JOIN history_runs r ON r.id = ht.run_id"
    "           LEFT JOIN github_fork_runs x ON x.history_run_id = r.id"
    "                 AND NOT coalesce(upper(x.author_association)"
    "                                  = ANY (string_to_array($6, ',')), false)"
    "          WHERE r.repository = $1 AND ht.test = t.test AND ht.failed"
    "            AND r.branch_class = 'other'"
    "            AND r.run_at >= $5::timestamptz - $3::interval AND r.run_at < $5::timestamptz)"
    "          AS trusted_fork_branches"
    "   FROM t LEFT JOIN f ON f.test = t.test LEFT JOIN m ON m.test = t.test"
    "   LEFT JOIN flaky_issues fi ON fi.project = $1 AND fi.test = t.test"
    "  ORDER BY coalesce(f.flaky, false) DESC, coalesce(f.branches, 0) DESC, t.test";
enum {
    C_TEST, C_RUNS, C_FAILURES, C_RATE, C_BRANCHES, C_PRS, C_MAIN_FAILURES, C_PUSH_CHANCE,
    C_FLAKY, C_FLIPS, C_LAST_FAILURE, C_FF_AT, C_FF_BRANCH, C_FF_REVISION, C_FF_URL, C_MESSAGE,
    C_STATE, C_NUMBER, C_URL, C_COMMENT, C_FIGURES, C_PRS_RAN_FAILED, C_TRUSTED_FORK, C_N
};
static const char *const CANDIDATE_COLS[C_N] = {
    "test", "runs", "failures", "failure_rate", "branches", "prs", "main_failures",
    "push_failure_chance", "flaky", "rerun_flips", "last_failure", "first_failure_at",
    "first_failure_branch", "first_failure_revision", "first_failure_url", "message", "state",
    "issue_number", "issue_url", "comment_id", "figures", "prs_ran_failed",
    "trusted_fork_branches"};
// clang-format on

static const char SQL_RECORD[] =
    "INSERT INTO flaky_issues (project, test, marker, tracker, state, issue_number, issue_url,"
    " comment_id, opened_at, updated_at, closed_at, reopened_at, last_failure_at, figures)"
    " VALUES ($1, $2, $3, $4, $5, $6::bigint, $7, $8::bigint, $9::timestamptz, $9::timestamptz,"
    " CASE WHEN $5 = 'closed' THEN $9::timestamptz END, NULL, to_timestamp($10::bigint),"
    " $11::jsonb)"
    " ON CONFLICT (project, test) DO UPDATE SET state = EXCLUDED.state,"
    " issue_number = EXCLUDED.issue_number, issue_url = EXCLUDED.issue_url,"
    " comment_id = EXCLUDED.comment_id, updated_at = EXCLUDED.updated_at,"
    " closed_at = CASE WHEN EXCLUDED.state = 'closed' THEN coalesce(CASE WHEN"
    "   flaky_issues.state = 'closed' THEN flaky_issues.closed_at END, EXCLUDED.updated_at) END,"
    " reopened_at = CASE WHEN flaky_issues.state = 'closed' AND EXCLUDED.state = 'open'"
    "   THEN EXCLUDED.updated_at ELSE flaky_issues.reopened_at END,"
    " last_failure_at = EXCLUDED.last_failure_at, figures = EXCLUDED.figures";

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

static const char *value_or_null(PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

/* The figures of one row of SQL_CANDIDATES and the state of its test's issue. */
static void read_candidate(PGresult *res, int r, const int *c, const rt_config *cfg, plan_row *p)
{
    rt_flaky_figures *f = &p->fig;
    f->test = PQgetvalue(res, r, c[C_TEST]);
    f->window_days = cfg->history_flaky_window_days;
    f->runs = atol(PQgetvalue(res, r, c[C_RUNS]));
    f->failures = atol(PQgetvalue(res, r, c[C_FAILURES]));
    f->failure_rate = atof(PQgetvalue(res, r, c[C_RATE]));
    f->branches = atol(PQgetvalue(res, r, c[C_BRANCHES]));
    f->prs = atol(PQgetvalue(res, r, c[C_PRS]));
    f->main_failures = atol(PQgetvalue(res, r, c[C_MAIN_FAILURES]));
    f->push_failure_chance = atof(PQgetvalue(res, r, c[C_PUSH_CHANCE]));
    /* strangers cannot drive an issue: the rule must hold on the trusted branches alone */
    long trusted = 0;
    if (sscanf(PQgetvalue(res, r, c[C_TRUSTED_FORK]), "%ld %ld", &trusted, &f->fork_branches) != 2)
        trusted = f->fork_branches = 0;
    f->flaky =
        (PQgetvalue(res, r, c[C_FLAKY])[0] == 't' && trusted > cfg->history_flaky_min_branches) ||
        (cfg->flaky_issue_on_main && f->main_failures > 0);
    f->rerun_flips = atol(PQgetvalue(res, r, c[C_FLIPS]));
    f->last_failure = (time_t)atoll(PQgetvalue(res, r, c[C_LAST_FAILURE]));
    f->first_failure_time = value_or_null(res, r, c[C_FF_AT]);
    f->first_failure_branch = value_or_null(res, r, c[C_FF_BRANCH]);
    f->first_failure_revision = value_or_null(res, r, c[C_FF_REVISION]);
    f->first_failure_url = value_or_null(res, r, c[C_FF_URL]);
    f->message = value_or_null(res, r, c[C_MESSAGE]);
    const char *prs = PQgetvalue(res, r, c[C_PRS_RAN_FAILED]);
    if (sscanf(prs, "%ld %ld", &f->prs_ran, &f->prs_failed) != 2) f->prs_ran = f->prs_failed = 0;
    const char *state = value_or_null(res, r, c[C_STATE]);
    p->state = !state ? RT_FLAKY_NONE : !strcmp(state, "open") ? RT_FLAKY_OPEN : RT_FLAKY_CLOSED;
    if (state) {
        p->issue.number = atoll(PQgetvalue(res, r, c[C_NUMBER]));
        snprintf(p->issue.url, sizeof p->issue.url, "%s", PQgetvalue(res, r, c[C_URL]));
        p->issue.comment_id =
            PQgetisnull(res, r, c[C_COMMENT]) ? 0 : atoll(PQgetvalue(res, r, c[C_COMMENT]));
        p->issue.open = p->state == RT_FLAKY_OPEN;
        p->stored = json_loads(PQgetvalue(res, r, c[C_FIGURES]), 0, NULL);
    }
}

/* Records an issue's state after a step on the tracker. */
static int record(rt_pg *pg, const char *project, plan_row *p, const char *tracker,
                  const char *now_text)
{
    char number[24], comment[24], last[24];
    snprintf(number, sizeof number, "%lld", p->issue.number);
    snprintf(comment, sizeof comment, "%lld", p->issue.comment_id);
    snprintf(last, sizeof last, "%lld", (long long)p->fig.last_failure);
    char *figures = json_dumps(p->fresh, JSON_COMPACT);
    if (!figures) return RT_ENOMEM;
    const char *params[] = {project,
                            p->fig.test,
                            p->marker,
                            tracker,
                            p->issue.open ? "open" : "closed",
                            number,
                            p->issue.url,
                            p->issue.comment_id > 0 ? comment : NULL,
                            now_text,
                            p->fig.last_failure > 0 ? last : "0",
                            figures};
    int rc = rt_pg_exec(pg, SQL_RECORD, 11, params, NULL);
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
    char now_text[32], until_text[32], window[32], min_branches[16];
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(now_text, sizeof now_text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    time_t until = now / 86400 * 86400 + 86400;
    gmtime_r(&until, &tm);
    strftime(until_text, sizeof until_text, "%Y-%m-%dT00:00:00Z", &tm);
    snprintf(window, sizeof window, "%d days", cfg->history_flaky_window_days);
    snprintf(min_branches, sizeof min_branches, "%d", cfg->history_flaky_min_branches);
    char errstr[RT_ERRSTR_SIZE] = "";
    if (token_file) {
        if (rt__cli_token_file(cfg, token_file)) return 2;
    }

    int status = 1;
    rt_pg *pg = NULL;
    rt_tracker *tracker = NULL;
    PGresult *res = NULL;
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
    const char *params[] = {project, now_text, window, min_branches, until_text, trusted};
    if (rt_pg_exec(pg, SQL_CANDIDATES, 6, params, &res) != RT_OK) {
        rt_log_error("cannot query the test history", "error", rt_pg_errstr(pg));
        goto out;
    }
    int c[C_N];
    if (rt_pg_columns(res, CANDIDATE_COLS, C_N, c, errstr) != RT_OK) {
        rt_log_error("cannot query the test history", "error", errstr);
        goto out;
    }
    n = PQntuples(res);
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
        read_candidate(res, r, c, cfg, p);
        f->variants = rt_test_variants_of(&variants, f->test, &f->nvariants);
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
        if (p->state == RT_FLAKY_NONE && !f->flaky && PQgetvalue(res, r, c[C_FLAKY])[0] == 't') {
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
    PQclear(res);
    rt_tracker_free(tracker);
    rt_pg_free(pg);
    return status;
}
