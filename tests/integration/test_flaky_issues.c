/* SPDX-License-Identifier: MPL-2.0 */
/* test_flaky_issues.c - `retrig flaky-issues` against the fake upstream's GitHub Issues and
 * Bugzilla and the local Postgres, each test in a database of its own, on a test history
 * written with rt_history_store and a pretended now (--now): a dry run changes nothing;
 * one issue per test through create, a crash between creating and recording (the issue is
 * found by its marker and adopted) and a second delivery; one figures comment, edited, not
 * one per run; quiet for flaky_issue_quiet_days -> closed with a comment -> failing again
 * -> reopened; the same life on Bugzilla, payloads checked field by field; fork pull
 * requests of strangers never open an issue alone, at most flaky_issues_max_new are opened
 * per pass, hostile names are stripped and escaped. */
#include "support/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/core/flaky_issue.h"
#include "common/core/history.h"
#include "common/io/history_store.h"
#include "support/classify_harness.h"
#include "support/cli_run.h"

#define REPO   "acme/widgets"
#define TOKEN  "ghp_flaky_issue_token_0123456789abcdef"
#define KEY    "bugzilla-api-key-0123456789"
#define FLAKY  "pkg/test_mod.py::test_flaky"
#define T0     "2024-06-10T12:00:00Z"
#define DAY(n) "2024-06-" #n "T12:00:00Z"

typedef struct fi_test {
    rt_ch *h;
    char env_db[600], env_api[128], env_bz[128];
    const char *env[16];
    int runs;
} fi_test;

static int setup(void **state)
{
    fi_test *t = calloc(1, sizeof *t);
    t->h = rt_ch_new();
    snprintf(t->env_db, sizeof t->env_db, "RETRIG_DATABASE_URL=%s", t->h->database_url);
    snprintf(t->env_api, sizeof t->env_api, "RETRIG_GITHUB_API_URL=%s", t->h->fake.base_url);
    snprintf(t->env_bz, sizeof t->env_bz, "RETRIG_BUGZILLA_URL=%s", t->h->fake.base_url);
    size_t n = 0;
    t->env[n++] = t->env_db;
    t->env[n++] = t->env_api;
    t->env[n++] = t->env_bz;
    t->env[n++] = "RETRIG_GITHUB_TOKEN=" TOKEN;
    t->env[n++] = "RETRIG_BUGZILLA_API_KEY=" KEY;
    t->env[n++] = "RETRIG_BUGZILLA_COMPONENTS=pkg/=Testing::Python Tests, *=Testing::General";
    t->env[n++] = "RETRIG_LOG_LEVEL=warn";
    t->env[n] = NULL;
    json_t *scenario = json_pack("{s:{s:{s:{s:s}}, s:s, s:s}}", "github", "repos", REPO,
                                 "default_branch", "main", "token", TOKEN, "bugzilla_api_key", KEY);
    rt_ch_scenario(t->h, scenario);
    json_decref(scenario);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    fi_test *t = *state;
    rt_ch_free(t->h);
    free(t);
    return 0;
}

/* One JUnit run of a pull request (0: main) at run_at: the flaky test failing or passing,
 * and a test that always passes. */
static void add_run(fi_test *t, int pr, const char *run_at, bool fail)
{
    rt_history_rows rows = {0};
    assert_int_equal(rt_history_rows_add_test(
                         &rows, FLAKY, "pkg/test_mod.py", fail ? "FAIL" : "PASS", NULL, fail, NULL,
                         fail ? "TimeoutError: worker did not reconnect" : NULL),
                     RT_OK);
    assert_int_equal(rt_history_rows_add_test(&rows, "pkg/test_mod.py::test_ok", "pkg/test_mod.py",
                                              "PASS", NULL, false, NULL, NULL),
                     RT_OK);
    char key[32], branch[32], run_key[32], sha[41];
    snprintf(run_key, sizeof run_key, "r%d", ++t->runs);
    snprintf(branch, sizeof branch, pr ? "fix-%d" : "main", pr);
    snprintf(key, sizeof key, pr ? "pr:%d" : "main", pr);
    snprintf(sha, sizeof sha, "%040d", t->runs);
    rt_history_run run = {.source = "junit",
                          .run_key = run_key,
                          .repository = REPO,
                          .project = REPO,
                          .branch = branch,
                          .main = pr == 0,
                          .branch_key = key,
                          .pr = pr,
                          .push = sha,
                          .revision = sha,
                          .run_at = run_at,
                          .complete_results = true};
    bool inserted = false;
    assert_int_equal(rt_pg_begin(t->h->pg), RT_OK);
    assert_int_equal(rt_history_store(t->h->pg, &run, &rows, false, &inserted), RT_OK);
    assert_int_equal(rt_pg_commit(t->h->pg), RT_OK);
    rt_history_rows_free(&rows);
}

/* Failures on pull requests first..last at run_at (one run each), and a passing main run. */
static void fail_on_prs(fi_test *t, int first, int last, const char *run_at)
{
    for (int pr = first; pr <= last; pr++) add_run(t, pr, run_at, true);
    add_run(t, 0, run_at, false);
}

/* One run as collect-github stores it (history run of source github, its github_runs row
 * and github_run_files row): `test` failing or passing on branch `branch` of head_repo
 * (REPO: the repository's own branch; another: a pull request from that fork), pull
 * request pr (0: none), its author's association (NULL: unknown). */
static void add_github_outcome(fi_test *t, const char *test, const char *status, bool fail,
                               const char *branch, const char *head_repo, int pr,
                               const char *association, const char *run_at)
{
    rt_history_rows rows = {0};
    assert_int_equal(rt_history_rows_add_test(&rows, test, "pkg/test_mod.py", status, NULL, fail,
                                              NULL, fail ? "AssertionError" : NULL),
                     RT_OK);
    char run_key[64], run_id[24], sha[41], key[600], prs[16];
    int id = ++t->runs;
    snprintf(run_id, sizeof run_id, "%d", 7000 + id);
    snprintf(run_key, sizeof run_key, "%s/1/junit/report.xml", run_id);
    snprintf(sha, sizeof sha, "%040d", id);
    snprintf(prs, sizeof prs, "%d", pr);
    bool fork = strcmp(head_repo, REPO) != 0;
    if (pr)
        snprintf(key, sizeof key, "pr:%d", pr);
    else if (fork)
        snprintf(key, sizeof key, "fork:%s:%s", head_repo, branch);
    else
        snprintf(key, sizeof key, "%s", branch);
    bool main_branch = !fork && !pr && !strcmp(branch, "main");
    rt_history_run run = {.source = "github",
                          .run_key = run_key,
                          .repository = REPO,
                          .project = REPO,
                          .branch = branch,
                          .main = main_branch,
                          .branch_key = key,
                          .pr = pr,
                          .push = sha,
                          .revision = sha,
                          .platform = "junit",
                          .run_at = run_at,
                          .complete_results = true};
    bool inserted = false;
    assert_int_equal(rt_pg_begin(t->h->pg), RT_OK);
    assert_int_equal(rt_history_store(t->h->pg, &run, &rows, false, &inserted), RT_OK);
    const char *gp[] = {REPO,      run_id,          branch, sha,
                        head_repo, pr ? prs : NULL, key,    main_branch ? "t" : "f",
                        run_at,    association};
    assert_int_equal(
        rt_pg_exec(t->h->pg,
                   "INSERT INTO github_runs (repository, run_id, attempt, event, conclusion,"
                   " head_branch, head_sha, head_repository, pr, branch_key, main, created_at,"
                   " run_started_at, author_association) VALUES ($1, $2::bigint, 1,"
                   " 'pull_request', 'failure', $3, $4, $5, $6::integer, $7, $8::boolean,"
                   " $9::timestamptz, $9::timestamptz, $10)",
                   10, gp, NULL),
        RT_OK);
    const char *fp[] = {REPO, run_key, run_id};
    assert_int_equal(rt_pg_exec(t->h->pg,
                                "INSERT INTO github_run_files (history_run_id, repository, run_id,"
                                " attempt, artifact, file) SELECT id, $1, $3::bigint, 1, 'junit',"
                                " 'report.xml' FROM history_runs WHERE source = 'github'"
                                " AND run_key = $2",
                                3, fp, NULL),
                     RT_OK);
    assert_int_equal(rt_pg_commit(t->h->pg), RT_OK);
    rt_history_rows_free(&rows);
}

static void add_github_run(fi_test *t, const char *test, const char *branch, const char *head_repo,
                           int pr, const char *association, const char *run_at, bool fail)
{
    add_github_outcome(t, test, fail ? "FAIL" : "PASS", fail, branch, head_repo, pr, association,
                       run_at);
}

static int flaky_issues(fi_test *t, char **out, const char *now, const char *mode,
                        const char *tracker)
{
    char now_arg[64], tracker_arg[64];
    snprintf(now_arg, sizeof now_arg, "--now=%s", now);
    snprintf(tracker_arg, sizeof tracker_arg, "--tracker=%s", tracker ? tracker : "github");
    const char *argv[] = {"retrig", "flaky-issues", "--project", REPO,
                          now_arg,  tracker_arg,    mode,        NULL};
    char *err = NULL;
    int status = rt_test_run(t->env, argv, out, &err);
    if (status != 0) fprintf(stderr, "flaky-issues exit %d: %s\n", status, err);
    free(err);
    return status;
}

static long long sql_int(fi_test *t, const char *sql) { return rt_ch_sql_int(t->h, sql, 0, NULL); }

/* The calls with this method to path, or under it when it ends with '/' (a JSON array). */
static json_t *calls(fi_test *t, const char *method, const char *prefix)
{
    json_t *all = rt_fake_calls(&t->h->fake, prefix), *out = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(all, i, c)
    {
        const char *path = json_string_value(json_object_get(c, "path"));
        bool under = prefix[strlen(prefix) - 1] == '/';
        if (!strcmp(json_string_value(json_object_get(c, "method")), method) &&
            (under || !strcmp(path, prefix)))
            json_array_append(out, c);
    }
    json_decref(all);
    return out;
}

static json_t *body_of(json_t *call)
{
    json_t *body = json_loads(json_string_value(json_object_get(call, "body")), 0, NULL);
    assert_non_null(body);
    return body;
}

static json_t *github_state(fi_test *t)
{
    char *text = NULL;
    assert_int_equal(rt_fake_control(&t->h->fake, "GET", "/_control/github", NULL, &text), 200);
    json_t *state = json_loads(text, 0, NULL);
    free(text);
    return state;
}

static void test_one_issue_per_test_through_create_crash_and_redelivery(void **state)
{
    fi_test *t = *state;
    fail_on_prs(t, 1, 5, DAY(08));
    char *out = NULL;
    /* a dry run (the default) plans and changes nothing */
    assert_int_equal(flaky_issues(t, &out, T0, "--dry-run", NULL), 0);
    assert_non_null(strstr(out, "dry run: acme/widgets: 1 to create"));
    assert_non_null(strstr(out, "would open: Flaky test: " FLAKY));
    free(out);
    json_t *none = rt_fake_calls(&t->h->fake, "/repos/");
    assert_int_equal(json_array_size(none), 0);
    json_decref(none);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM flaky_issues"), 0);

    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    assert_non_null(strstr(out, "created"));
    free(out);
    json_t *posts = calls(t, "POST", "/repos/acme/widgets/issues");
    assert_int_equal(json_array_size(posts), 1);
    json_t *payload = body_of(json_array_get(posts, 0));
    char marker[RT_FLAKY_MARKER_SIZE], first_line[80];
    rt_flaky_marker(REPO, FLAKY, marker);
    snprintf(first_line, sizeof first_line, "<!-- %s -->\n", marker);
    assert_string_equal(json_string_value(json_object_get(payload, "title")), "Flaky test: " FLAKY);
    assert_int_equal(json_array_size(json_object_get(payload, "labels")), 1);
    assert_string_equal(json_string_value(json_array_get(json_object_get(payload, "labels"), 0)),
                        "flaky-test");
    const char *body = json_string_value(json_object_get(payload, "body"));
    assert_memory_equal(body, first_line, strlen(first_line));
    assert_non_null(strstr(body, "| pull requests / branches hit | 5 / 5 |"));
    assert_non_null(strstr(body, "TimeoutError: worker did not reconnect"));
    assert_int_equal(json_object_size(payload), 3);
    json_decref(payload);
    json_decref(posts);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM flaky_issues WHERE state = 'open'"
                                " AND issue_number = 1 AND tracker = 'github'"),
                     1);

    /* a crash between creating and recording: the record is gone, the issue is there */
    assert_int_equal(rt_pg_exec(t->h->pg, "DELETE FROM flaky_issues", 0, NULL, NULL), RT_OK);
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    assert_non_null(strstr(out, "adopted"));
    free(out);
    posts = calls(t, "POST", "/repos/acme/widgets/issues");
    assert_int_equal(json_array_size(posts), 0);
    json_decref(posts);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM flaky_issues WHERE issue_number = 1"), 1);

    /* delivered again: nothing to do, nothing asked */
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    free(out);
    json_t *any = rt_fake_calls(&t->h->fake, "/repos/");
    assert_int_equal(json_array_size(any), 0);
    json_decref(any);
    json_t *gh = github_state(t);
    assert_int_equal(json_array_size(json_object_get(gh, "issues")), 1);
    json_decref(gh);
}

static void test_quiet_closed_then_back_reopened_with_one_edited_comment(void **state)
{
    fi_test *t = *state;
    fail_on_prs(t, 1, 4, DAY(08));
    char *out = NULL;
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    free(out);
    /* it keeps failing: the figures go into one comment, written once then edited */
    fail_on_prs(t, 5, 5, "2024-06-11T10:00:00Z");
    assert_int_equal(flaky_issues(t, &out, DAY(11), "--apply", NULL), 0);
    assert_non_null(strstr(out, "updated"));
    free(out);
    long long comment = sql_int(t, "SELECT comment_id FROM flaky_issues");
    assert_true(comment > 0);
    fail_on_prs(t, 6, 6, "2024-06-12T10:00:00Z");
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, DAY(12), "--apply", NULL), 0);
    free(out);
    json_t *patches = calls(t, "PATCH", "/repos/acme/widgets/issues/comments/");
    assert_int_equal(json_array_size(patches), 1);
    char path[128];
    snprintf(path, sizeof path, "/repos/acme/widgets/issues/comments/%lld", comment);
    assert_string_equal(json_string_value(json_object_get(json_array_get(patches, 0), "path")),
                        path);
    json_t *payload = body_of(json_array_get(patches, 0));
    assert_non_null(strstr(json_string_value(json_object_get(payload, "body")),
                           "| pull requests / branches hit | 6 / 6 |"));
    json_decref(payload);
    json_decref(patches);
    json_t *new_comments = calls(t, "POST", "/repos/acme/widgets/issues/1/comments");
    assert_int_equal(json_array_size(new_comments), 0);
    json_decref(new_comments);
    assert_int_equal(sql_int(t, "SELECT comment_id FROM flaky_issues"), comment);

    /* a crash before recording again: the issue and its figures comment are found again */
    assert_int_equal(rt_pg_exec(t->h->pg, "DELETE FROM flaky_issues", 0, NULL, NULL), RT_OK);
    fail_on_prs(t, 7, 7, "2024-06-12T11:00:00Z");
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, DAY(12), "--apply", NULL), 0);
    assert_non_null(strstr(out, "adopted"));
    free(out);
    new_comments = calls(t, "POST", "/repos/acme/widgets/issues/1/comments");
    assert_int_equal(json_array_size(new_comments), 0);
    json_decref(new_comments);
    patches = calls(t, "PATCH", path);
    assert_int_equal(json_array_size(patches), 1);
    json_decref(patches);
    assert_int_equal(sql_int(t, "SELECT comment_id FROM flaky_issues"), comment);

    /* quiet for 14 days after the last failure (June 12): closed with a comment */
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, "2024-06-26T11:00:00Z", "--apply", NULL), 0);
    assert_non_null(strstr(out, "closed"));
    free(out);
    json_t *closing = calls(t, "POST", "/repos/acme/widgets/issues/1/comments");
    assert_int_equal(json_array_size(closing), 1);
    payload = body_of(json_array_get(closing, 0));
    assert_non_null(strstr(json_string_value(json_object_get(payload, "body")),
                           "`" FLAKY "` has not failed for 14 days: closing."));
    json_decref(payload);
    json_decref(closing);
    json_t *state_patch = calls(t, "PATCH", "/repos/acme/widgets/issues/1");
    assert_int_equal(json_array_size(state_patch), 1);
    payload = body_of(json_array_get(state_patch, 0));
    assert_string_equal(json_string_value(json_object_get(payload, "state")), "closed");
    assert_string_equal(json_string_value(json_object_get(payload, "state_reason")), "completed");
    assert_int_equal(json_object_size(payload), 2);
    json_decref(payload);
    json_decref(state_patch);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM flaky_issues WHERE state = 'closed'"
                                " AND closed_at = '2024-06-26T11:00:00Z'"),
                     1);
    /* the closing comment and the closing PATCH: at least a second apart, as GitHub asks
     * of mutations */
    json_t *all = rt_fake_calls(&t->h->fake, "/repos/");
    size_t i, mutations = 0;
    double last = 0;
    json_t *call;
    json_array_foreach(all, i, call)
    {
        const char *method = json_string_value(json_object_get(call, "method"));
        if (!strcmp(method, "GET")) continue;
        double at = json_number_value(json_object_get(call, "time"));
        if (mutations++) assert_true(at - last >= 0.99);
        last = at;
    }
    json_decref(all);
    assert_int_equal(mutations, 2);
    /* still quiet: nothing */
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, "2024-06-27T13:00:00Z", "--apply", NULL), 0);
    free(out);
    json_t *any = rt_fake_calls(&t->h->fake, "/repos/");
    assert_int_equal(json_array_size(any), 0);
    json_decref(any);

    /* it comes back: reopened, with a comment, and the same figures comment edited */
    fail_on_prs(t, 11, 14, "2024-06-28T10:00:00Z");
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, "2024-06-28T12:00:00Z", "--apply", NULL), 0);
    assert_non_null(strstr(out, "reopened"));
    free(out);
    state_patch = calls(t, "PATCH", "/repos/acme/widgets/issues/1");
    assert_int_equal(json_array_size(state_patch), 1);
    payload = body_of(json_array_get(state_patch, 0));
    assert_string_equal(json_string_value(json_object_get(payload, "state")), "open");
    json_decref(payload);
    json_decref(state_patch);
    patches = calls(t, "PATCH", path);
    assert_int_equal(json_array_size(patches), 1);
    json_decref(patches);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM flaky_issues WHERE state = 'open'"
                                " AND reopened_at = '2024-06-28T12:00:00Z' AND closed_at IS NULL"),
                     1);
    json_t *gh = github_state(t);
    json_t *issues = json_object_get(gh, "issues");
    assert_int_equal(json_array_size(issues), 1);
    json_t *issue = json_array_get(issues, 0);
    assert_string_equal(json_string_value(json_object_get(issue, "state")), "open");
    /* the figures comment, the closing one, the reopening one */
    assert_int_equal(json_array_size(json_object_get(issue, "comment_list")), 3);
    json_decref(gh);

    /* retrig flakes shows the issue */
    const char *argv[] = {"retrig", "flakes", "--project", REPO, "--until", "2024-06-28T12:00:00Z",
                          NULL};
    assert_int_equal(rt_test_run(t->env, argv, &out, NULL), 0);
    assert_non_null(strstr(out, "#1  " FLAKY));
    free(out);
}

static void test_bugzilla_gets_one_bug_per_test_with_its_fields(void **state)
{
    fi_test *t = *state;
    fail_on_prs(t, 1, 5, DAY(08));
    char *out = NULL;
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", "bugzilla"), 0);
    assert_non_null(strstr(out, "created"));
    free(out);
    json_t *posts = calls(t, "POST", "/rest/bug");
    assert_int_equal(json_array_size(posts), 1);
    json_t *call = json_array_get(posts, 0);
    const char *k;
    json_t *v;
    const char *api_key = NULL;
    json_object_foreach(json_object_get(call, "headers"), k, v)
    {
        if (!strcasecmp(k, "X-BUGZILLA-API-KEY")) api_key = json_string_value(v);
    }
    assert_non_null(api_key);
    assert_string_equal(api_key, KEY);
    json_t *bug = body_of(call);
    char marker[RT_FLAKY_MARKER_SIZE], whiteboard[64];
    rt_flaky_marker(REPO, FLAKY, marker);
    snprintf(whiteboard, sizeof whiteboard, "[%s]", marker);
    assert_string_equal(json_string_value(json_object_get(bug, "product")), "Testing");
    assert_string_equal(json_string_value(json_object_get(bug, "component")), "Python Tests");
    assert_string_equal(json_string_value(json_object_get(bug, "summary")), "Flaky test: " FLAKY);
    assert_string_equal(json_string_value(json_object_get(bug, "version")), "unspecified");
    assert_string_equal(json_string_value(json_object_get(bug, "type")), "defect");
    assert_string_equal(json_string_value(json_object_get(bug, "whiteboard")), whiteboard);
    assert_int_equal(json_array_size(json_object_get(bug, "keywords")), 1);
    assert_string_equal(json_string_value(json_array_get(json_object_get(bug, "keywords"), 0)),
                        "intermittent-failure");
    assert_non_null(
        strstr(json_string_value(json_object_get(bug, "description")), "| failure rate |"));
    assert_string_equal(json_string_value(json_object_get(bug, "op_sys")), "Unspecified");
    assert_string_equal(json_string_value(json_object_get(bug, "platform")), "Unspecified");
    assert_int_equal(json_object_size(bug), 10);
    json_decref(bug);
    json_decref(posts);
    long long id = sql_int(t, "SELECT issue_number FROM flaky_issues WHERE tracker = 'bugzilla'");
    assert_true(id >= 1900001);

    /* a crash before recording: the whiteboard search finds the bug, no second one */
    assert_int_equal(rt_pg_exec(t->h->pg, "DELETE FROM flaky_issues", 0, NULL, NULL), RT_OK);
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", "bugzilla"), 0);
    free(out);
    posts = calls(t, "POST", "/rest/bug");
    assert_int_equal(json_array_size(posts), 0);
    json_decref(posts);
    assert_int_equal(sql_int(t, "SELECT issue_number FROM flaky_issues"), id);

    /* quiet: resolved WORKSFORME with a comment */
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, "2024-06-25T12:00:00Z", "--apply", "bugzilla"), 0);
    free(out);
    char path[64];
    snprintf(path, sizeof path, "/rest/bug/%lld", id);
    json_t *puts_ = calls(t, "PUT", path);
    assert_true(json_array_size(puts_) >= 1);
    json_t *put = body_of(json_array_get(puts_, json_array_size(puts_) - 1));
    assert_string_equal(json_string_value(json_object_get(put, "status")), "RESOLVED");
    assert_string_equal(json_string_value(json_object_get(put, "resolution")), "WORKSFORME");
    assert_non_null(
        strstr(json_string_value(json_object_get(json_object_get(put, "comment"), "body")),
               "has not failed for 14 days"));
    json_decref(put);
    json_decref(puts_);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM flaky_issues WHERE state = 'closed'"), 1);
}

/* Four pull requests from forks by strangers fail a test: shown, never an issue; a member's
 * fork pull request and the repository's own branches count, and the issue then shows the
 * strangers' pull requests as evidence. */
static void test_fork_prs_of_strangers_never_open_an_issue_alone(void **state)
{
    fi_test *t = *state;
    static const char *const who[] = {"CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE", NULL};
    for (int i = 0; i < 4; i++) {
        char fork[64];
        snprintf(fork, sizeof fork, "stranger%d/widgets", i);
        add_github_run(t, FLAKY, "patch-1", fork, 10 + i, who[i], DAY(08), true);
    }
    add_github_run(t, FLAKY, "main", REPO, 0, NULL, DAY(08), false);
    char *out = NULL;
    assert_int_equal(flaky_issues(t, &out, T0, "--dry-run", NULL), 0);
    assert_non_null(strstr(out, "0 to create"));
    assert_non_null(strstr(out, "forks"));
    assert_null(strstr(out, "would open"));
    free(out);
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    free(out);
    json_t *posts = calls(t, "POST", "/repos/acme/widgets/issues");
    assert_int_equal(json_array_size(posts), 0);
    json_decref(posts);

    /* with trusted branches past history_flaky_min_branches (3): a member's fork pull request
     * and three branches of the repository itself */
    add_github_run(t, FLAKY, "fix", "member/widgets", 20, "MEMBER", DAY(08), true);
    add_github_run(t, FLAKY, "feature-a", REPO, 0, NULL, DAY(08), true);
    add_github_run(t, FLAKY, "feature-b", REPO, 0, NULL, DAY(08), true);
    add_github_run(t, FLAKY, "feature-c", REPO, 0, NULL, DAY(08), true);
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    assert_non_null(strstr(out, "created"));
    free(out);
    posts = calls(t, "POST", "/repos/acme/widgets/issues");
    assert_int_equal(json_array_size(posts), 1);
    json_t *payload = body_of(json_array_get(posts, 0));
    const char *body = json_string_value(json_object_get(payload, "body"));
    assert_non_null(strstr(body, "4 of them pull requests from forks"));
    assert_non_null(strstr(body, "not counted toward opening an issue) | 4 |"));
    json_decref(payload);
    json_decref(posts);
}

/* The flaky flag of retrig flakes and its page follows the same trust rule: four strangers'
 * fork pull requests make no flaky test there either (they stay visible as fork_branches);
 * once four trusted branches fail it too, the test is flaky. */
static void test_flakes_flag_counts_no_strangers_fork_prs(void **state)
{
    fi_test *t = *state;
    static const char *const who[] = {"CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE", NULL};
    for (int i = 0; i < 4; i++) {
        char fork[64];
        snprintf(fork, sizeof fork, "stranger%d/widgets", i);
        add_github_run(t, FLAKY, "patch-1", fork, 10 + i, who[i], DAY(08), true);
    }
    add_github_run(t, FLAKY, "main", REPO, 0, NULL, DAY(08), false);
    const char *json_argv[] = {"retrig", "flakes",   "--project", REPO, "--until",
                               T0,       "--format", "json",      NULL};
    char *out = NULL;
    assert_int_equal(rt_test_run(t->env, json_argv, &out, NULL), 0);
    json_t *doc = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(doc);
    json_t *row = json_array_get(json_object_get(doc, "tests"), 0);
    assert_string_equal(json_string_value(json_object_get(row, "test")), FLAKY);
    assert_int_equal(json_integer_value(json_object_get(row, "branches")), 4);
    assert_true(json_is_false(json_object_get(row, "flaky")));
    assert_true(json_is_true(json_object_get(row, "flaky_through_forks")));
    assert_int_equal(json_integer_value(json_object_get(row, "fork_branches")), 4);
    json_decref(doc);
    const char *table_argv[] = {"retrig", "flakes",   "--project", REPO, "--until",
                                T0,       "--format", "table",     NULL};
    assert_int_equal(rt_test_run(t->env, table_argv, &out, NULL), 0);
    assert_non_null(
        strstr(out, "flaky only through 4 fork pull requests of untrusted authors: evidence"));
    free(out);

    /* the page shows no flaky badge for it */
    char page_path[] = "/tmp/retrig_forks_page_XXXXXX";
    int fd = mkstemp(page_path);
    assert_true(fd >= 0);
    close(fd);
    char out_arg[64];
    snprintf(out_arg, sizeof out_arg, "--out=%s", page_path);
    const char *report_argv[] = {"retrig",  "report", "--project", REPO,
                                 "--until", T0,       out_arg,     NULL};
    assert_int_equal(rt_test_run(t->env, report_argv, &out, NULL), 0);
    free(out);
    FILE *f = fopen(page_path, "r");
    assert_non_null(f);
    static char html[1 << 20];
    size_t n = fread(html, 1, sizeof html - 1, f);
    html[n] = '\0';
    fclose(f);
    unlink(page_path);
    assert_null(strstr(html, "class=\"badge flaky\""));

    /* a member's fork pull request and three of the repository's branches: flaky */
    add_github_run(t, FLAKY, "fix", "member/widgets", 20, "MEMBER", DAY(08), true);
    add_github_run(t, FLAKY, "feature-a", REPO, 0, NULL, DAY(08), true);
    add_github_run(t, FLAKY, "feature-b", REPO, 0, NULL, DAY(08), true);
    add_github_run(t, FLAKY, "feature-c", REPO, 0, NULL, DAY(08), true);
    assert_int_equal(rt_test_run(t->env, json_argv, &out, NULL), 0);
    doc = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(doc);
    row = json_array_get(json_object_get(doc, "tests"), 0);
    assert_true(json_is_true(json_object_get(row, "flaky")));
    assert_null(json_object_get(row, "flaky_through_forks"));
    assert_int_equal(json_integer_value(json_object_get(row, "fork_branches")), 4);
    json_decref(doc);
}

/* Eight tests become flaky at once: flaky_issues_max_new (5) are opened, the others wait
 * for the next pass, which opens them. */
static void test_at_most_max_new_issues_are_opened_per_pass(void **state)
{
    fi_test *t = *state;
    for (int k = 0; k < 8; k++) {
        char test[64];
        snprintf(test, sizeof test, "pkg/test_mod.py::test_many_%d", k);
        for (int pr = 1; pr <= 4; pr++)
            add_github_run(t, test, "fix", REPO, pr, NULL, DAY(08), true);
    }
    char *out = NULL;
    assert_int_equal(flaky_issues(t, &out, T0, "--dry-run", NULL), 0);
    assert_non_null(strstr(out, "5 to create"));
    assert_non_null(strstr(out, "3 more flaky tests wait for the next pass"));
    free(out);
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    free(out);
    json_t *posts = calls(t, "POST", "/repos/acme/widgets/issues");
    assert_int_equal(json_array_size(posts), 5);
    json_decref(posts);
    rt_fake_reset(&t->h->fake);
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    free(out);
    posts = calls(t, "POST", "/repos/acme/widgets/issues");
    assert_int_equal(json_array_size(posts), 3);
    json_decref(posts);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM flaky_issues"), 8);
}

/* A test name with bidirectional and control characters, first failing on a branch named
 * "@octocat|": the title and body drop the invisible characters, the table cell keeps the
 * branch in one code span (no mention, no extra cell), the terminal table escapes. */
static void test_hostile_names_are_stripped_and_escaped(void **state)
{
    fi_test *t = *state;
    const char *hostile = "pkg/test_mod.py::test_\xe2\x80\xae"
                          "evil\x1b[31m\xc2\x9b";
    for (int i = 0; i < 4; i++) {
        char branch[32];
        snprintf(branch, sizeof branch, i ? "b%d" : "@octocat|", i);
        add_github_run(t, hostile, branch, REPO, 0, NULL, i ? DAY(09) : DAY(08), true);
    }
    char *out = NULL;
    assert_int_equal(flaky_issues(t, &out, T0, "--dry-run", NULL), 0);
    assert_null(strchr(out, '\x1b'));
    assert_null(strstr(out, "\xe2\x80\xae"));
    assert_non_null(strstr(out, "\\x1b"));
    free(out);
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    free(out);
    json_t *posts = calls(t, "POST", "/repos/acme/widgets/issues");
    assert_int_equal(json_array_size(posts), 1);
    json_t *payload = body_of(json_array_get(posts, 0));
    const char *title = json_string_value(json_object_get(payload, "title"));
    const char *body = json_string_value(json_object_get(payload, "body"));
    assert_string_equal(title, "Flaky test: pkg/test_mod.py::test_evil[31m");
    assert_null(strstr(body, "\xe2\x80\xae"));
    assert_null(strstr(body, "\xc2\x9b"));
    assert_null(strchr(body, '\x1b'));
    assert_non_null(strstr(body, " on `@octocat\\|` at commit "));
    json_decref(payload);
    json_decref(posts);
}

/* The outcomes a report gives that are no plain failure are shown as such: a test FLAKY
 * within its runs is labelled in retrig flakes (table and JSON), the page and its issue; a
 * module that failed to collect and a disabled test, on as many branches, open no issue and
 * are listed apart as no test failures. */
static void test_outcomes_are_labelled_and_non_failures_open_no_issue(void **state)
{
    fi_test *t = *state;
    static const char *const branches[] = {"b1", "b2", "b3", "b4", "b5"};
    for (int i = 0; i < 5; i++) {
        add_github_outcome(t, FLAKY, i < 2 ? "FLAKY" : "FAIL", true, branches[i], REPO, 0, NULL,
                           DAY(08));
        add_github_outcome(t, "pkg.tests.test_broken", "COLLECTION_ERROR", false, branches[i], REPO,
                           0, NULL, DAY(08));
        add_github_outcome(t, "pkg/test_mod.py::test_off", "DISABLED", false, branches[i], REPO, 0,
                           NULL, DAY(08));
    }
    char *out = NULL;
    assert_int_equal(flaky_issues(t, &out, T0, "--apply", NULL), 0);
    assert_non_null(strstr(out, "1 to create"));
    free(out);
    json_t *posts = calls(t, "POST", "/repos/acme/widgets/issues");
    assert_int_equal(json_array_size(posts), 1);
    json_t *payload = body_of(json_array_get(posts, 0));
    assert_string_equal(json_string_value(json_object_get(payload, "title")), "Flaky test: " FLAKY);
    assert_non_null(
        strstr(json_string_value(json_object_get(payload, "body")),
               "FLAKY in the report itself (failed, then passed within one run) | 2 |"));
    json_decref(payload);
    json_decref(posts);

    const char *json_argv[] = {"retrig", "flakes",   "--project", REPO, "--until",
                               T0,       "--format", "json",      NULL};
    assert_int_equal(rt_test_run(t->env, json_argv, &out, NULL), 0);
    json_t *doc = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(doc);
    json_t *row = json_array_get(json_object_get(doc, "tests"), 0);
    assert_string_equal(json_string_value(json_object_get(row, "test")), FLAKY);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(row, "outcomes"), "FLAKY")),
                     2);
    json_t *others = json_object_get(doc, "not_test_failures");
    assert_int_equal(json_array_size(others), 2);
    size_t i;
    json_t *o;
    int seen = 0;
    json_array_foreach(others, i, o)
    {
        const char *test = json_string_value(json_object_get(o, "test"));
        json_t *outcomes = json_object_get(o, "outcomes");
        if (!strcmp(test, "pkg.tests.test_broken"))
            seen += json_integer_value(json_object_get(outcomes, "COLLECTION_ERROR")) == 5;
        if (!strcmp(test, "pkg/test_mod.py::test_off"))
            seen += json_integer_value(json_object_get(outcomes, "DISABLED")) == 5;
    }
    assert_int_equal(seen, 2);
    json_decref(doc);

    const char *table_argv[] = {"retrig", "flakes",   "--project", REPO, "--until",
                                T0,       "--format", "table",     NULL};
    assert_int_equal(rt_test_run(t->env, table_argv, &out, NULL), 0);
    assert_non_null(strstr(out, "outcomes: FLAKY x2"));
    assert_non_null(strstr(out, "COLLECTION_ERROR x5     pkg.tests.test_broken"));
    free(out);

    char page_path[] = "/tmp/retrig_outcomes_page_XXXXXX";
    int fd = mkstemp(page_path);
    assert_true(fd >= 0);
    close(fd);
    char out_arg[64];
    snprintf(out_arg, sizeof out_arg, "--out=%s", page_path);
    const char *report_argv[] = {"retrig",  "report", "--project", REPO,
                                 "--until", T0,       out_arg,     NULL};
    assert_int_equal(rt_test_run(t->env, report_argv, &out, NULL), 0);
    free(out);
    FILE *f = fopen(page_path, "r");
    assert_non_null(f);
    static char html[1 << 20];
    size_t n = fread(html, 1, sizeof html - 1, f);
    html[n] = '\0';
    fclose(f);
    unlink(page_path);
    assert_non_null(strstr(html, ">FLAKY 2×</span>"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_issue_per_test_through_create_crash_and_redelivery,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_quiet_closed_then_back_reopened_with_one_edited_comment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bugzilla_gets_one_bug_per_test_with_its_fields, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fork_prs_of_strangers_never_open_an_issue_alone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_flakes_flag_counts_no_strangers_fork_prs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_at_most_max_new_issues_are_opened_per_pass, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hostile_names_are_stripped_and_escaped, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_outcomes_are_labelled_and_non_failures_open_no_issue,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
