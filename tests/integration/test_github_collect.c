/* SPDX-License-Identifier: MPL-2.0 */
/* test_github_collect.c - `retrig collect-github` against the fake upstream's GitHub and
 * the local Postgres, each test in a database of its own: a collector killed mid-way
 * resumes and stores each outcome exactly once; rate-limit exhaustion stops cleanly, a
 * later run resumes after the reset, and the periodic mode waits for resets itself; a
 * re-run attempt is a second outcome of the same commit and a flip in retrig flakes, a
 * fork's run is keyed by its branch, the storage host never sees the token and a secondary
 * limit is waited out; cancelled runs, expired artifacts, unparsable files and runs without
 * a JUnit artifact are gaps in the coverage section, and an unchanged listing is a 304. */
#include "support/util.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/classify_harness.h"
#include "support/cli_run.h"

#define REPO  "acme/widgets"
#define TOKEN "ghp_test_token_for_the_fake_0123456789"
#define NTEST 10

typedef struct gh_test {
    rt_ch *h;
    char env_db[600], env_api[128], env_token[128];
    const char *env[8];
} gh_test;

static int setup(void **state)
{
    gh_test *t = calloc(1, sizeof *t);
    t->h = rt_ch_new();
    snprintf(t->env_db, sizeof t->env_db, "RETRIG_DATABASE_URL=%s", t->h->database_url);
    snprintf(t->env_api, sizeof t->env_api, "RETRIG_GITHUB_API_URL=%s", t->h->fake.base_url);
    snprintf(t->env_token, sizeof t->env_token, "RETRIG_GITHUB_TOKEN=%s", TOKEN);
    t->env[0] = t->env_db;
    t->env[1] = t->env_api;
    t->env[2] = t->env_token;
    t->env[3] = "RETRIG_LOG_LEVEL=warn";
    t->env[4] = "RETRIG_HTTP_TIMEOUT_MS=10000";
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    gh_test *t = *state;
    rt_ch_free(t->h);
    free(t);
    return 0;
}

static void iso_ago(long seconds, char *out, size_t size)
{
    time_t t = time(NULL) - seconds;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A pytest-like JUnit file of NTEST tests pkg/test_mod.py::test_<i>; `failing` (may be
 * NULL) names the tests that fail, comma-separated indexes ",3,". */
static char *junit(const char *failing, bool truncated)
{
    char *xml = malloc(8192);
    size_t n = (size_t)snprintf(xml, 8192,
                                "<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites><testsuite "
                                "name=\"pytest\" tests=\"%d\" timestamp=\"2024-05-01T10:00:00\">",
                                NTEST);
    for (int i = 0; i < NTEST; i++) {
        char key[8];
        snprintf(key, sizeof key, ",%d,", i);
        bool fail = failing && strstr(failing, key);
        n += (size_t)snprintf(
            xml + n, 8192 - n,
            "<testcase classname=\"pkg/test_mod.py\" name=\"test_%d\" time=\"0.1\"%s", i,
            fail ? "><failure message=\"AssertionError: flaky\">assert 1 == 2"
                   "</failure></testcase>"
                 : " />");
    }
    snprintf(xml + n, 8192 - n, "</testsuite></testsuites>");
    if (truncated) xml[n / 2] = '\0';
    return xml;
}

static json_t *artifact(const char *name, const char *xml, bool expired)
{
    return json_pack("{s:s, s:{s:s}, s:b}", "name", name, "files", "reports/junit.xml", xml,
                     "expired", expired);
}

/* A completed run: attempts as [{conclusion, run_started_at, artifacts}]. */
static json_t *run(long long id, const char *branch, int pr, const char *fork, long ago_s,
                   json_t *attempts)
{
    char created[32], sha[41];
    iso_ago(ago_s, created, sizeof created);
    snprintf(sha, sizeof sha, "%040llx", id * 7919);
    json_t *r = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:o, s:o}", "repo", REPO, "id",
                          (json_int_t)id, "head_branch", branch, "head_sha", sha, "created_at",
                          created, "head_repository", fork ? fork : REPO, "pull_requests",
                          pr ? json_pack("[i]", pr) : json_array(), "attempts", attempts);
    json_object_set_new(r, "event", json_string(pr || fork ? "pull_request" : "push"));
    return r;
}

static json_t *attempt(const char *conclusion, long ago_s, json_t *artifacts)
{
    char started[32];
    iso_ago(ago_s, started, sizeof started);
    return json_pack("{s:s, s:s, s:o}", "conclusion", conclusion, "run_started_at", started,
                     "artifacts", artifacts ? artifacts : json_array());
}

/* Loads {"github": {"repos", "runs", "token", ...extra}} into the fake. */
static void load(gh_test *t, json_t *runs, json_t *extra)
{
    json_t *gh = json_pack("{s:{s:{s:s}}, s:o, s:s}", "repos", REPO, "default_branch", "main",
                           "runs", runs, "token", TOKEN);
    if (extra) json_object_update(gh, extra);
    json_decref(extra);
    json_t *scenario = json_pack("{s:o}", "github", gh);
    rt_ch_scenario(t->h, scenario);
    json_decref(scenario);
}

static int collect(gh_test *t, char **out, const char *const *more_env, const char *a1,
                   const char *a2)
{
    const char *env[16];
    size_t n = 0;
    for (size_t i = 0; t->env[i]; i++) env[n++] = t->env[i];
    for (size_t i = 0; more_env && more_env[i]; i++) env[n++] = more_env[i];
    env[n] = NULL;
    const char *argv[] = {"retrig", "collect-github", "--repo", REPO, a1, a2, NULL};
    char *err = NULL;
    int status = rt_test_run(env, argv, out, &err);
    if (status != 0) fprintf(stderr, "collect-github exit %d: %s\n", status, err);
    free(err);
    return status;
}

static long long sql_int(gh_test *t, const char *sql) { return rt_ch_sql_int(t->h, sql, 0, NULL); }

/* n runs of one attempt (a pull request or main) with one JUnit artifact, plus a run whose
 * second attempt passed: n + 2 attempts, (n + 2) * NTEST outcomes. */
static json_t *plain_runs(int n)
{
    json_t *runs = json_array();
    for (int i = 0; i < n; i++) {
        char *xml = junit(i % 2 ? ",3," : NULL, false);
        json_array_append_new(
            runs,
            run(5000 + i * 3, i % 2 ? "main" : "fix", i % 2 ? 0 : 100 + i, NULL, 7200 + i * 60,
                json_pack("[o]", attempt(i % 2 ? "failure" : "success", 7200 + i * 60,
                                         json_pack("[o]", artifact("junit", xml, false))))));
        free(xml);
    }
    char *red = junit(",3,", false), *green = junit(NULL, false);
    json_array_append_new(
        runs,
        run(9000, "fix-r", 90, NULL, 6000,
            json_pack(
                "[o, o]", attempt("failure", 6000, json_pack("[o]", artifact("junit", red, false))),
                attempt("success", 3000, json_pack("[o]", artifact("junit-2", green, false))))));
    free(red);
    free(green);
    return runs;
}

static void test_killed_collector_resumes_and_stores_each_outcome_once(void **state)
{
    gh_test *t = *state;
    load(t, plain_runs(7), json_pack("{s:i}", "page_size", 3));
    /* downloads take a while, so the kill lands mid-collection */
    assert_int_equal(rt_fake_add_fault(&t->h->fake, "{\"path_prefix\": \"/storage/\", \"kind\":"
                                                    " \"latency\", \"ms\": 300}"),
                     200);
    const char *argv[] = {"retrig", "collect-github", "--repo", REPO, NULL};
    pid_t pid = rt_test_spawn(t->env, argv);
    long long stored =
        rt_ch_wait_int(t->h, 20000, 3, "SELECT least(count(*), 3) FROM github_runs", 0, NULL);
    assert_int_equal(stored, 3);
    kill(pid, SIGKILL);
    assert_int_equal(rt_test_wait(pid), 128 + SIGKILL);
    long long before = sql_int(t, "SELECT count(*) FROM github_runs");
    assert_true(before >= 3 && before < 9);
    /* each attempt is all or nothing: its outcomes came with its row */
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests"), before * NTEST);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_run_files"), before);

    char *out = NULL;
    assert_int_equal(collect(t, &out, NULL, NULL, NULL), 0);
    assert_non_null(strstr(out, "attempts stored"));
    free(out);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_runs"), 9);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_runs WHERE source = 'github'"), 9);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests"), 9 * NTEST);
    assert_int_equal(sql_int(t,
                             "SELECT count(*) FROM (SELECT r.run_key, t.test FROM history_tests t"
                             " JOIN history_runs r ON r.id = t.run_id GROUP BY 1, 2"
                             " HAVING count(*) > 1) d"),
                     0);
    /* and once more: nothing new, no download */
    rt_fake_reset(&t->h->fake);
    assert_int_equal(collect(t, &out, NULL, NULL, NULL), 0);
    assert_non_null(strstr(out, "0 attempts stored"));
    free(out);
    json_t *downloads = rt_fake_calls(&t->h->fake, "/storage/");
    assert_int_equal(json_array_size(downloads), 0);
    json_decref(downloads);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests"), 9 * NTEST);
    assert_int_equal(sql_int(t, "SELECT runs_stored FROM github_collect_state"), 9);
}

static void test_rate_limit_stops_cleanly_and_resumes_after_the_reset(void **state)
{
    gh_test *t = *state;
    json_t *runs = json_array();
    for (int i = 0; i < 4; i++) {
        char *xml = junit(NULL, false);
        json_array_append_new(
            runs, run(7000 + i, "fix", 10 + i, NULL, 3600 + i * 60,
                      json_pack("[o]", attempt("success", 3600 + i * 60,
                                               json_pack("[o]", artifact("junit", xml, false))))));
        free(xml);
    }
    /* 5 requests a window of 3 s: the repository, the listing, then 2 per run */
    load(t, runs,
         json_pack("{s:{s:i, s:i, s:i}}", "rate_limit", "limit", 5, "remaining", 5, "reset_s", 3));
    const char *reserve[] = {"RETRIG_GITHUB_RATE_LIMIT_RESERVE=0", NULL};
    char *out = NULL;
    assert_int_equal(collect(t, &out, reserve, NULL, NULL), 0);
    assert_non_null(strstr(out, "stopped: GitHub rate limit: 0 requests left (reserve 0) until "));
    assert_non_null(strstr(out, "run again after the reset to resume"));
    free(out);
    long long first = sql_int(t, "SELECT count(*) FROM github_runs");
    assert_int_equal(first, 1);
    char *reason =
        rt_ch_sql_text(t->h, "SELECT last_stop_reason FROM github_collect_state", 0, NULL);
    assert_string_equal(reason, "rate-limit");
    free(reason);
    /* at once again: the limit is still used up, nothing more, a clean stop */
    assert_int_equal(collect(t, &out, reserve, NULL, NULL), 0);
    assert_non_null(strstr(out, "stopped: GitHub rate limit"));
    free(out);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_runs"), 1);
    /* after the reset a later run goes on where it stopped */
    sleep(4);
    assert_int_equal(collect(t, &out, reserve, NULL, NULL), 0);
    free(out);
    long long second = sql_int(t, "SELECT count(*) FROM github_runs");
    assert_true(second > first);
    /* the periodic mode waits for resets itself and finishes */
    const char *env[] = {t->env[0], t->env[1], t->env[2], t->env[3], reserve[0], NULL};
    const char *argv[] = {"retrig", "collect-github", "--repo", REPO, "--interval", "1h", NULL};
    pid_t pid = rt_test_spawn(env, argv);
    assert_int_equal(rt_ch_wait_int(t->h, 30000, 4, "SELECT count(*) FROM github_runs", 0, NULL),
                     4);
    /* the pass is over (the last run's rollup and the state are written after its outcomes):
     * a SIGTERM now ends the wait for the next pass, not a pass */
    assert_int_equal(rt_ch_wait_int(t->h, 30000, 1,
                                    "SELECT count(*) FROM github_collect_state"
                                    " WHERE last_stop_reason IS NULL"
                                    " AND last_pass_finished >= last_pass_started",
                                    0, NULL),
                     1);
    kill(pid, SIGTERM);
    assert_int_equal(rt_test_wait(pid), 0);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests"), 4 * NTEST);
    reason = rt_ch_sql_text(
        t->h, "SELECT coalesce(last_stop_reason, 'none') FROM github_collect_state", 0, NULL);
    assert_string_equal(reason, "none");
    free(reason);
}

static bool has_header(json_t *call, const char *name)
{
    const char *key;
    json_t *value;
    json_object_foreach(json_object_get(call, "headers"), key, value)
    {
        if (!strcasecmp(key, name)) return true;
    }
    return false;
}

static void test_rerun_attempt_is_a_second_outcome_and_a_flip(void **state)
{
    gh_test *t = *state;
    char *red = junit(",3,", false), *green = junit(NULL, false);
    json_t *runs = json_pack(
        "[o, o, o]",
        run(8100, "fix-flaky", 7, NULL, 9000,
            json_pack("[o, o]",
                      attempt("failure", 9000, json_pack("[o]", artifact("junit", red, false))),
                      attempt("success", 4000,
                              json_pack("[o]", artifact("junit-attempt2", green, false))))),
        run(8200, "patch-1", 0, "bob/widgets", 8000,
            json_pack("[o]",
                      attempt("failure", 8000, json_pack("[o]", artifact("junit", red, false))))),
        run(8300, "main", 0, NULL, 7000,
            json_pack("[o]", attempt("success", 7000,
                                     json_pack("[o]", artifact("junit", green, false))))));
    free(red);
    free(green);
    load(t, runs, NULL);
    /* one secondary rate limit on the listing: waited out */
    assert_int_equal(
        rt_fake_add_fault(&t->h->fake,
                          "{\"path_prefix\": \"/repos/acme/widgets/actions/runs\","
                          " \"method\": \"GET\", \"kind\": \"status\", \"status\": 403,"
                          " \"times\": 1, \"headers\": {\"retry-after\": \"1\"},"
                          " \"body\": {\"message\": \"You have exceeded a secondary rate"
                          " limit.\"}}"),
        200);
    char *out = NULL;
    /* a budget of 2 requests: the repository and the listing, then a clean stop */
    assert_int_equal(collect(t, &out, NULL, "--max-requests=2", NULL), 0);
    assert_non_null(strstr(out, "stopped: request budget of 2 used (--max-requests)"));
    free(out);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_runs"), 0);
    char *reason =
        rt_ch_sql_text(t->h, "SELECT last_stop_reason FROM github_collect_state", 0, NULL);
    assert_string_equal(reason, "budget");
    free(reason);
    assert_int_equal(collect(t, &out, NULL, NULL, NULL), 0);
    assert_non_null(strstr(out, "4 attempts stored"));
    free(out);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_runs"), 4);
    /* both attempts of the same commit are kept: one red, one green outcome */
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests t JOIN github_run_files f"
                                " ON f.history_run_id = t.run_id WHERE f.run_id = 8100"
                                " AND t.test = 'pkg/test_mod.py::test_3'"),
                     2);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests t JOIN github_run_files f"
                                " ON f.history_run_id = t.run_id WHERE f.run_id = 8100"
                                " AND f.attempt = 1 AND t.failed AND f.artifact = 'junit'"),
                     1);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_rerun_flips WHERE run_id = 8100"
                                " AND failed_attempt = 1 AND passed_attempt = 2"
                                " AND test = 'pkg/test_mod.py::test_3'"),
                     1);
    char *key = rt_ch_sql_text(t->h,
                               "SELECT string_agg(branch_key || ':' || main, ' ' ORDER BY"
                               " run_id, attempt) FROM github_runs",
                               0, NULL);
    assert_string_equal(key, "pr:7:false pr:7:false fork:bob/widgets:patch-1:false main:true");
    free(key);

    /* the storage host never got the token; the API always did */
    json_t *calls = rt_fake_calls(&t->h->fake, NULL);
    size_t i, storage = 0, refused = 0;
    json_t *call;
    json_array_foreach(calls, i, call)
    {
        const char *path = json_string_value(json_object_get(call, "path"));
        long status = (long)json_integer_value(json_object_get(call, "status"));
        if (!strncmp(path, "/storage/", 9)) {
            storage++;
            assert_false(has_header(call, "Authorization"));
            assert_int_equal(status, 200);
        } else if (!strncmp(path, "/repos/", 7)) {
            json_t *auth = NULL;
            const char *k;
            json_t *v;
            json_object_foreach(json_object_get(call, "headers"), k, v)
            {
                if (!strcasecmp(k, "Authorization")) auth = v;
            }
            assert_non_null(auth);
            assert_string_equal(json_string_value(auth), "Bearer " TOKEN);
            if (status == 403) refused++;
        }
    }
    assert_int_equal(storage, 4);
    assert_int_equal(refused, 1);
    json_decref(calls);

    /* retrig flakes shows the flip */
    const char *argv[] = {"retrig", "flakes", "--project", REPO, "--format", "json", NULL};
    assert_int_equal(rt_test_run(t->env, argv, &out, NULL), 0);
    json_t *doc = json_loads(out, 0, NULL);
    assert_non_null(doc);
    bool seen = false;
    json_t *row;
    json_array_foreach(json_object_get(doc, "tests"), i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "test")), "pkg/test_mod.py::test_3"))
            continue;
        seen = true;
        assert_int_equal(json_integer_value(json_object_get(row, "rerun_flips")), 1);
        assert_int_equal(json_integer_value(json_object_get(row, "failures")), 2);
    }
    assert_true(seen);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(doc, "coverage"), "rerun_attempts")), 1);
    json_decref(doc);
    free(out);
}

/* A Surefire report with a rerun that passed and a nameless testcase (issue 31): the test is
 * stored FLAKY (a failure) and counted as a flip within its attempt; the nameless testcase is
 * a gap of its file while the file's other tests are stored. */
static void test_a_flaky_rerun_within_an_attempt_is_a_flip_and_a_bad_testcase_a_gap(void **state)
{
    gh_test *t = *state;
    static const char xml[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        "<testsuite name=\"org.example.RetryTest\" tests=\"3\" timestamp=\"2024-05-01T10:00:00\">"
        "<testcase name=\"failsOnce\" classname=\"org.example.RetryTest\" time=\"0.009\">"
        "<flakyFailure message=\"expected: &lt;true&gt; but was: &lt;false&gt;\""
        " type=\"org.opentest4j.AssertionFailedError\"><stackTrace>at x</stackTrace>"
        "</flakyFailure></testcase>"
        "<testcase name=\"\" classname=\"org.example.RetryTest\"/>"
        "<testcase name=\"passes\" classname=\"org.example.RetryTest\"/>"
        "</testsuite>";
    load(t,
         json_pack("[o]",
                   run(8700, "fix-retry", 11, NULL, 9000,
                       json_pack("[o]", attempt("success", 9000,
                                                json_pack("[o]", artifact("surefire-test-reports",
                                                                          xml, false)))))),
         NULL);
    char *out = NULL;
    assert_int_equal(collect(t, &out, NULL, NULL, NULL), 0);
    free(out);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests WHERE test ="
                                " 'org.example.RetryTest::failsOnce' AND status = 'FLAKY'"
                                " AND failed"),
                     1);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests WHERE test ="
                                " 'org.example.RetryTest::passes' AND status = 'PASS'"),
                     1);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_rerun_flips WHERE run_id = 8700"
                                " AND failed_attempt = 1 AND passed_attempt = 1"
                                " AND test = 'org.example.RetryTest::failsOnce'"),
                     1);
    char *detail =
        rt_ch_sql_text(t->h,
                       "SELECT detail FROM github_run_gaps WHERE run_id = 8700"
                       " AND kind = 'unparsable-file' AND artifact = 'surefire-test-reports'",
                       0, NULL);
    assert_non_null(detail);
    assert_non_null(strstr(detail, "1 of 3 testcases set aside, the rest stored"));
    free(detail);
    const char *argv[] = {"retrig", "flakes", "--project", REPO, "--format", "json", NULL};
    assert_int_equal(rt_test_run(t->env, argv, &out, NULL), 0);
    json_t *doc = json_loads(out, 0, NULL);
    assert_non_null(doc);
    size_t i;
    json_t *row;
    bool seen = false;
    json_array_foreach(json_object_get(doc, "tests"), i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "test")),
                   "org.example.RetryTest::failsOnce"))
            continue;
        seen = true;
        assert_int_equal(json_integer_value(json_object_get(row, "rerun_flips")), 1);
    }
    assert_true(seen);
    json_decref(doc);
    free(out);
}

static void test_unusable_runs_are_gaps_and_an_unchanged_listing_is_a_304(void **state)
{
    gh_test *t = *state;
    char *good = junit(NULL, false), *cut = junit(",1,", true);
    json_t *coverage_art = json_pack("{s:s, s:{s:s}}", "name", "coverage-report", "files",
                                     "coverage.xml", "<coverage/>");
    json_t *runs = json_pack(
        "[o, o, o, o, o]",
        run(6100, "fix-a", 1, NULL, 5000, json_pack("[o]", attempt("cancelled", 5000, NULL))),
        run(6200, "fix-b", 2, NULL, 4900,
            json_pack("[o]",
                      attempt("success", 4900, json_pack("[o]", artifact("junit-x", good, true))))),
        run(6300, "fix-c", 3, NULL, 4800,
            json_pack("[o]",
                      attempt("failure", 4800, json_pack("[o]", artifact("junit-y", cut, false))))),
        run(6400, "fix-d", 4, NULL, 4700,
            json_pack("[o]", attempt("success", 4700, json_pack("[o]", coverage_art)))),
        run(6500, "fix-e", 5, NULL, 4600,
            json_pack("[o]", attempt("success", 4600,
                                     json_pack("[o]", artifact("junit-z", good, false))))));
    free(good);
    free(cut);
    load(t, runs, NULL);
    char *out = NULL;
    assert_int_equal(collect(t, &out, NULL, "--artifact-pattern=junit*", "--since=7d"), 0);
    assert_non_null(strstr(out, "5 attempts stored"));
    assert_non_null(strstr(out, "(1 expired)"));
    free(out);
    char *kinds =
        rt_ch_sql_text(t->h,
                       "SELECT string_agg(run_id || ' ' || kind, ', ' ORDER BY run_id, kind)"
                       " FROM github_run_gaps",
                       0, NULL);
    assert_string_equal(kinds,
                        "6100 cancelled, 6200 expired-artifact, 6200 no-junit-artifact, "
                        "6300 no-junit-artifact, 6300 unparsable-file, 6400 no-junit-artifact");
    free(kinds);
    char *detail = rt_ch_sql_text(t->h,
                                  "SELECT file || ': ' || detail FROM github_run_gaps WHERE kind"
                                  " = 'unparsable-file'",
                                  0, NULL);
    assert_non_null(strstr(detail, "reports/junit.xml: line "));
    free(detail);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests"), NTEST);

    const char *argv[] = {"retrig", "flakes", "--project", REPO, "--format", "json", NULL};
    assert_int_equal(rt_test_run(t->env, argv, &out, NULL), 0);
    json_t *doc = json_loads(out, 0, NULL);
    json_t *cov = json_object_get(doc, "coverage");
    assert_int_equal(json_integer_value(json_object_get(cov, "run_attempts")), 5);
    assert_int_equal(json_integer_value(json_object_get(cov, "attempts_with_outcomes")), 1);
    assert_int_equal(json_integer_value(json_object_get(cov, "attempts_with_gaps")), 4);
    assert_int_equal(json_integer_value(json_object_get(cov, "expired_artifacts")), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(cov, "gaps_by_kind"),
                                                        "no-junit-artifact")),
                     3);
    assert_int_equal(json_array_size(json_object_get(doc, "gaps")), 6);
    json_decref(doc);
    free(out);

    /* the same listing again: a conditional request answered 304, nothing else asked */
    rt_fake_reset(&t->h->fake);
    assert_int_equal(collect(t, &out, NULL, "--artifact-pattern=junit*", "--since=7d"), 0);
    assert_non_null(strstr(out, "unchanged since the last pass"));
    free(out);
    json_t *calls = rt_fake_calls(&t->h->fake, "/repos/");
    assert_int_equal(json_array_size(calls), 2); /* the repository, the listing */
    json_t *listing = json_array_get(calls, 1);
    assert_int_equal(json_integer_value(json_object_get(listing, "status")), 304);
    assert_true(has_header(listing, "If-None-Match"));
    json_decref(calls);
}

/* Runs the CLI with the test's environment plus more_env; argv ends with NULL. */
static int run_cli(gh_test *t, const char *const *more_env, const char *const *argv, char **out,
                   char **err)
{
    const char *env[16];
    size_t n = 0;
    for (size_t i = 0; t->env[i]; i++) env[n++] = t->env[i];
    for (size_t i = 0; more_env && more_env[i]; i++) env[n++] = more_env[i];
    env[n] = NULL;
    return rt_test_run(env, argv, out, err);
}

/* GitHub answers a renamed repository's old path 301 to /repositories/{id}/..., whose pages
 * link on under /repositories/{id}/: each redirect is followed with the token (same host);
 * a redirect to another host is refused, and that host never hears of the token. */
static void test_api_redirects_are_followed_on_the_same_host_only(void **state)
{
    gh_test *t = *state;
    json_t *runs = json_array();
    for (int i = 0; i < 3; i++) {
        char *xml = junit(i == 1 ? ",2," : NULL, false);
        json_array_append_new(
            runs, run(8600 + i, "fix", 40 + i, NULL, 3600 + i * 60,
                      json_pack("[o]", attempt("success", 3600 + i * 60,
                                               json_pack("[o]", artifact("junit", xml, false))))));
        free(xml);
    }
    load(t, runs, json_pack("{s:{s:s}, s:i}", "renamed", "acme/old-widgets", REPO, "page_size", 2));
    const char *argv[] = {"retrig", "collect-github", "--repo", "acme/old-widgets", NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(run_cli(t, NULL, argv, &out, &err), 0);
    assert_non_null(strstr(out, "3 attempts stored"));
    free(out);
    free(err);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_runs"), 3);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests"), 3 * NTEST);
    json_t *calls = rt_fake_calls(&t->h->fake, NULL);
    size_t i, moved = 0, by_id = 0;
    json_t *call;
    json_array_foreach(calls, i, call)
    {
        const char *path = json_string_value(json_object_get(call, "path"));
        long status = (long)json_integer_value(json_object_get(call, "status"));
        if (!strncmp(path, "/repos/acme/old-widgets", 23)) {
            assert_int_equal(status, 301);
            moved++;
        } else if (!strncmp(path, "/repositories/", 14)) {
            assert_true(has_header(call, "Authorization"));
            assert_int_equal(status, strstr(path, "/zip") ? 302 : 200); /* 302: to storage */
            by_id++;
        }
    }
    json_decref(calls);
    assert_true(moved >= 3); /* the repository, the listing, each run's calls */
    assert_true(by_id >= 4); /* and the listing's second page, linked by id */

    /* a redirect to another host (localhost is not 127.0.0.1): refused, never sent */
    rt_fake_reset(&t->h->fake);
    char fault[512];
    snprintf(fault, sizeof fault,
             "{\"path_prefix\": \"/repos/acme/widgets/actions/runs\", \"kind\": \"status\","
             " \"status\": 307, \"headers\": {\"Location\": \"http://localhost:%d/repos/acme/"
             "widgets/actions/runs\"}, \"body\": {\"message\": \"Temporary Redirect\"}}",
             t->h->fake.port);
    assert_int_equal(rt_fake_add_fault(&t->h->fake, fault), 200);
    const char *argv2[] = {"retrig", "collect-github", "--repo", REPO, "--since=30d", NULL};
    out = err = NULL;
    assert_int_not_equal(run_cli(t, NULL, argv2, &out, &err), 0);
    assert_non_null(strstr(err, "redirect outside github_api_url refused"));
    free(out);
    free(err);
    calls = rt_fake_calls(&t->h->fake, "/repos/acme/widgets/actions/runs");
    assert_int_equal(json_array_size(calls), 1);
    json_decref(calls);
}

/* GitHub serves at most 1,000 runs of a listing filtered by creation time (the fake: its
 * listing_cap, 4 here, and github_listing_cap with it), and says so only in total_count:
 * the window is halved until none reaches the cap, and every run is collected. */
static void test_capped_listing_is_split_into_created_windows(void **state)
{
    gh_test *t = *state;
    json_t *runs = json_array();
    for (int i = 0; i < 11; i++) {
        char *xml = junit(NULL, false);
        long ago = 3600 + i * 5400L; /* every 90 minutes over 16 hours */
        json_array_append_new(
            runs, run(8700 + i, "fix", 60 + i, NULL, ago,
                      json_pack("[o]", attempt("success", ago,
                                               json_pack("[o]", artifact("junit", xml, false))))));
        free(xml);
    }
    load(t, runs, json_pack("{s:i}", "listing_cap", 4));
    const char *cap[] = {"RETRIG_GITHUB_LISTING_CAP=4", NULL};
    const char *argv[] = {"retrig", "collect-github", "--repo", REPO, "--since=2d", NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(run_cli(t, cap, argv, &out, &err), 0);
    assert_non_null(strstr(out, "11 attempts stored"));
    assert_non_null(strstr(err, "run listing reaches GitHub's cap: split into created windows"));
    free(out);
    free(err);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_runs"), 11);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests"), 11 * NTEST);
    /* every window asked for was answered below the cap, and each run was listed once */
    json_t *calls = rt_fake_calls(&t->h->fake, "/repos/acme/widgets/actions/runs");
    size_t i, windows = 0;
    json_t *call;
    json_array_foreach(calls, i, call)
    {
        const char *query = json_string_value(json_object_get(call, "query"));
        const char *path = json_string_value(json_object_get(call, "path"));
        if (strcmp(path, "/repos/acme/widgets/actions/runs") || !strstr(query, "..")) continue;
        windows++;
    }
    json_decref(calls);
    assert_true(windows >= 4);
    assert_int_equal(sql_int(t, "SELECT runs_stored FROM github_collect_state"), 11);
}

/* A secondary rate limit without retry-after: GitHub asks for at least a minute, longer
 * on each further one. github_secondary_wait_s shrinks the minute to a second here: the
 * waits are that base, then at least twice it (exponential, with jitter on top). */
static void test_secondary_limit_without_retry_after_backs_off_exponentially(void **state)
{
    gh_test *t = *state;
    char *xml = junit(NULL, false);
    json_t *runs = json_pack(
        "[o]", run(8800, "fix", 80, NULL, 3600,
                   json_pack("[o]", attempt("success", 3600,
                                            json_pack("[o]", artifact("junit", xml, false))))));
    free(xml);
    load(t, runs, NULL);
    assert_int_equal(
        rt_fake_add_fault(&t->h->fake,
                          "{\"path_prefix\": \"/repos/acme/widgets/actions/runs\","
                          " \"method\": \"GET\", \"kind\": \"status\", \"status\": 403,"
                          " \"times\": 2, \"body\": {\"message\": \"You have exceeded a"
                          " secondary rate limit. Please wait a few minutes before you try"
                          " again.\"}}"),
        200);
    const char *fast[] = {"RETRIG_GITHUB_SECONDARY_WAIT_S=1", NULL};
    const char *argv[] = {"retrig", "collect-github", "--repo", REPO, NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(run_cli(t, fast, argv, &out, &err), 0);
    assert_non_null(strstr(out, "1 attempts stored"));
    free(out);
    free(err);
    json_t *calls = rt_fake_calls(&t->h->fake, "/repos/acme/widgets/actions/runs");
    double at[3];
    for (size_t i = 0; i < 3; i++) {
        json_t *call = json_array_get(calls, i);
        assert_string_equal(json_string_value(json_object_get(call, "path")),
                            "/repos/acme/widgets/actions/runs");
        assert_int_equal(json_integer_value(json_object_get(call, "status")), i < 2 ? 403 : 200);
        at[i] = json_number_value(json_object_get(call, "time"));
    }
    json_decref(calls);
    double first = at[1] - at[0], second = at[2] - at[1];
    assert_true(first >= 0.95 && first < 1.5);   /* the base, with at most a quarter more */
    assert_true(second >= 1.95 && second < 3.0); /* doubled */
}

/* GitHub lists no pull request for runs from forks nor for pull requests merged since: each
 * is looked up (by head owner and branch, by commit for a run without a branch) once per head
 * repository and branch, and counted as that pull request, with its author's association;
 * another fork's branch of the same name is not that pull request. */
static void test_fork_and_merged_prs_get_their_number(void **state)
{
    gh_test *t = *state;
    char *red = junit(",3,", false);
    json_t *runs = json_pack(
        "[o, o, o, o, o]",
        run(8500, "patch-1", 0, "bob/widgets", 9000,
            json_pack("[o]",
                      attempt("failure", 9000, json_pack("[o]", artifact("junit", red, false))))),
        run(8501, "patch-1", 0, "bob/widgets", 8000,
            json_pack("[o]",
                      attempt("failure", 8000, json_pack("[o]", artifact("junit", red, false))))),
        run(8502, "feature", 0, NULL, 7000,
            json_pack("[o]",
                      attempt("failure", 7000, json_pack("[o]", artifact("junit", red, false))))),
        run(8503, "patch-1", 0, "carol/widgets", 6000,
            json_pack("[o]",
                      attempt("failure", 6000, json_pack("[o]", artifact("junit", red, false))))),
        run(8504, "detached", 0, NULL, 5000,
            json_pack("[o]",
                      attempt("failure", 5000, json_pack("[o]", artifact("junit", red, false))))));
    free(red);
    /* the runs as GitHub lists them: pull requests events, pull_requests empty; the last one
     * with a null head_branch */
    json_t *r;
    size_t i;
    json_array_foreach(runs, i, r) json_object_set_new(r, "event", json_string("pull_request"));
    json_object_set_new(json_array_get(runs, 4), "head_branch", json_null());
    char sha0[41], sha1[41], sha2[41], sha4[41];
    snprintf(sha0, sizeof sha0, "%040llx", 8500LL * 7919);
    snprintf(sha1, sizeof sha1, "%040llx", 8501LL * 7919);
    snprintf(sha2, sizeof sha2, "%040llx", 8502LL * 7919);
    snprintf(sha4, sizeof sha4, "%040llx", 8504LL * 7919);
    json_t *pulls = json_pack(
        "[{s:s, s:i, s:s, s:s, s:s, s:s}, {s:s, s:i, s:s, s:s, s:s, s:s},"
        " {s:s, s:i, s:s, s:s, s:s, s:s, s:b, s:s}, {s:s, s:i, s:s, s:s, s:s, s:s, s:b, s:s}]",
        /* bob's pull request: an older one of the same branch, then the open one */
        "repo", REPO, "number", 40, "head_repository", "bob/widgets", "head_branch", "patch-1",
        "head_sha", sha0, "author_association", "CONTRIBUTOR", "repo", REPO, "number", 42,
        "head_repository", "bob/widgets", "head_branch", "patch-1", "head_sha", sha1,
        "author_association", "CONTRIBUTOR",
        /* the repository's own branch, merged since */
        "repo", REPO, "number", 43, "head_repository", REPO, "head_branch", "feature", "head_sha",
        sha2, "state", "closed", "merged", true, "author_association", "MEMBER",
        /* found by its commit */
        "repo", REPO, "number", 44, "head_repository", REPO, "head_branch", "gone", "head_sha",
        sha4, "state", "closed", "merged", true, "author_association", "OWNER");
    load(t, runs, json_pack("{s:o}", "pulls", pulls));
    char *out = NULL;
    assert_int_equal(collect(t, &out, NULL, NULL, NULL), 0);
    assert_non_null(strstr(out, "5 attempts stored"));
    assert_non_null(strstr(out, "4 runs counted as the pull request"));
    free(out);
    char *key = rt_ch_sql_text(t->h,
                               "SELECT string_agg(branch_key || ':' || coalesce(pr::text, '-') ||"
                               " ':' || coalesce(author_association, '-'), ' ' ORDER BY run_id)"
                               " FROM github_runs",
                               0, NULL);
    /* bob's two runs are his pull requests 40 and 42 (the head commit decides), carol's
     * branch of the same name is hers, not bob's */
    assert_string_equal(key, "pr:40:40:CONTRIBUTOR pr:42:42:CONTRIBUTOR pr:43:43:MEMBER"
                             " fork:carol/widgets:patch-1:-:- pr:44:44:OWNER");
    free(key);
    assert_int_equal(sql_int(t, "SELECT count(DISTINCT pr) FROM history_runs WHERE pr IS NOT NULL"),
                     4);
    /* one look-up per head repository and branch: bob's branch once for his two runs */
    json_t *calls = rt_fake_calls(&t->h->fake, "/repos/acme/widgets/pulls");
    assert_int_equal(json_array_size(calls), 3);
    json_decref(calls);
    calls = rt_fake_calls(&t->h->fake, "/repos/acme/widgets/commits/");
    assert_int_equal(json_array_size(calls), 1);
    json_decref(calls);
}

/* Each outcome keeps its variant (the matrix job naming its artifact): a test failing on
 * Windows in both attempts of a re-run while Ubuntu passes is no flip, one failing then
 * passing on Windows is; retrig flakes breaks its failures down by variant and says it
 * fails on Windows only. */
static void test_variants_are_kept_and_flips_compare_the_same_variant(void **state)
{
    gh_test *t = *state;
    char *red = junit(",3,", false), *green = junit(NULL, false);
    json_t *runs = json_pack(
        "[o, o]",
        run(8800, "fix-win", 21, NULL, 9000,
            json_pack("[o, o]",
                      attempt("failure", 9000,
                              json_pack("[o, o]", artifact("test-results-windows-3.12", red, false),
                                        artifact("test-results-ubuntu-3.12", green, false))),
                      attempt("failure", 5000,
                              json_pack("[o, o]", artifact("test-results-windows-3.12", red, false),
                                        artifact("test-results-ubuntu-3.12", green, false))))),
        run(8801, "fix-win-2", 22, NULL, 8000,
            json_pack(
                "[o, o]",
                attempt("failure", 8000,
                        json_pack("[o, o]", artifact("test-results-windows-3.12", red, false),
                                  artifact("test-results-ubuntu-3.12", green, false))),
                attempt("success", 4000,
                        json_pack("[o, o]",
                                  artifact("test-results-windows-3.12-attempt2", green, false),
                                  artifact("test-results-ubuntu-3.12", green, false))))));
    free(red);
    free(green);
    load(t, runs, NULL);
    char *out = NULL;
    assert_int_equal(collect(t, &out, NULL, NULL, NULL), 0);
    assert_non_null(strstr(out, "4 attempts stored"));
    free(out);
    /* Windows failed in both attempts of 8800: no flip; 8801 flipped on Windows */
    assert_int_equal(sql_int(t, "SELECT count(*) FROM github_rerun_flips WHERE run_id = 8800"), 0);
    char *variants = rt_ch_sql_text(t->h,
                                    "SELECT array_to_string(variants, ',') FROM github_rerun_flips"
                                    " WHERE run_id = 8801 AND test = 'pkg/test_mod.py::test_3'",
                                    0, NULL);
    assert_string_equal(variants, "test-results-windows-3.12");
    free(variants);
    const char *argv[] = {"retrig", "flakes", "--project", REPO, "--format", "json", NULL};
    assert_int_equal(rt_test_run(t->env, argv, &out, NULL), 0);
    json_t *doc = json_loads(out, 0, NULL);
    free(out);
    json_t *row = json_array_get(json_object_get(doc, "tests"), 0);
    assert_string_equal(json_string_value(json_object_get(row, "test")), "pkg/test_mod.py::test_3");
    assert_string_equal(json_string_value(json_object_get(row, "only_variant")),
                        "test-results-windows-3.12");
    json_t *by = json_object_get(row, "variants");
    assert_int_equal(json_array_size(by), 2);
    json_t *ubuntu = json_array_get(by, 0), *windows = json_array_get(by, 1);
    assert_string_equal(json_string_value(json_object_get(ubuntu, "variant")),
                        "test-results-ubuntu-3.12");
    assert_int_equal(json_integer_value(json_object_get(ubuntu, "runs")), 4);
    assert_int_equal(json_integer_value(json_object_get(ubuntu, "failures")), 0);
    assert_int_equal(json_integer_value(json_object_get(windows, "runs")), 4);
    assert_int_equal(json_integer_value(json_object_get(windows, "failures")), 3);
    json_decref(doc);
    const char *table[] = {"retrig", "flakes", "--project", REPO, "--format", "table", NULL};
    assert_int_equal(rt_test_run(t->env, table, &out, NULL), 0);
    assert_non_null(strstr(out, "fails on one variant only: test-results-windows-3.12 (of 2)"));
    assert_non_null(strstr(out, "failing variants: windows py3.12 3/4 (of 2)\n"));
    free(out);
    /* the flaky-test page says it too */
    char page_path[] = "/tmp/retrig_variants_page_XXXXXX";
    int fd = mkstemp(page_path);
    assert_true(fd >= 0);
    close(fd);
    char out_arg[64];
    snprintf(out_arg, sizeof out_arg, "--out=%s", page_path);
    const char *report[] = {"retrig", "report", "--project", REPO, out_arg, NULL};
    assert_int_equal(rt_test_run(t->env, report, &out, NULL), 0);
    free(out);
    FILE *f = fopen(page_path, "r");
    assert_non_null(f);
    static char html[1 << 20];
    size_t n = fread(html, 1, sizeof html - 1, f);
    html[n] = '\0';
    fclose(f);
    unlink(page_path);
    assert_non_null(strstr(html, ">only on windows py3.12</span>"));
}

/* dask/distributed's matrix jobs ("<os>-<environment>-<label>-<partition>"): a test failing
 * on both Windows jobs while Ubuntu and macOS pass is flaky on Windows only; retrig flakes
 * gives each variant's OS, Python version and partition, and the table, the page and the
 * dry-run issue say "Windows only". */
static void test_variants_read_as_os_python_and_partition(void **state)
{
    gh_test *t = *state;
    char *red = junit(",3,", false), *green = junit(NULL, false);
    static const char *const jobs[] = {
        "windows-latest-3.12-default-ci1", "windows-latest-3.11-default-notci1",
        "ubuntu-latest-3.12-default-ci1", "macos-latest-3.14-default-ci1"};
    json_t *runs = json_array();
    static const char *const branches[] = {"fix-a", "fix-b", "fix-c", "fix-d"};
    for (int r = 0; r < 4; r++) {
        json_t *artifacts = json_array();
        for (int j = 0; j < 4; j++)
            json_array_append_new(artifacts, artifact(jobs[j], j < 2 ? red : green, false));
        json_array_append_new(runs,
                              run(8900 + r, branches[r], 30 + r, NULL, 9000 - r * 60,
                                  json_pack("[o]", attempt("failure", 9000 - r * 60, artifacts))));
    }
    free(red);
    free(green);
    load(t, runs, NULL);
    char *out = NULL;
    assert_int_equal(collect(t, &out, NULL, "--artifact-pattern", "*,!*_cluster_dumps"), 0);
    free(out);
    const char *argv[] = {"retrig", "flakes", "--project", REPO, "--format", "json", NULL};
    assert_int_equal(rt_test_run(t->env, argv, &out, NULL), 0);
    json_t *doc = json_loads(out, 0, NULL);
    free(out);
    json_t *row = json_array_get(json_object_get(doc, "tests"), 0);
    assert_string_equal(json_string_value(json_object_get(row, "test")), "pkg/test_mod.py::test_3");
    assert_true(json_is_null(json_object_get(row, "only_variant")));
    assert_string_equal(json_string_value(json_object_get(row, "only_os")), "Windows");
    json_t *by = json_object_get(row, "variants"), *v;
    assert_int_equal(json_array_size(by), 4);
    size_t i;
    int seen = 0;
    json_array_foreach(by, i, v)
    {
        const char *name = json_string_value(json_object_get(v, "variant"));
        if (!strcmp(name, "windows-latest-3.11-default-notci1")) {
            assert_string_equal(json_string_value(json_object_get(v, "os")), "windows-latest");
            assert_string_equal(json_string_value(json_object_get(v, "os_family")), "Windows");
            assert_string_equal(json_string_value(json_object_get(v, "python")), "3.11");
            assert_string_equal(json_string_value(json_object_get(v, "partition")), "notci1");
            assert_string_equal(json_string_value(json_object_get(v, "label")),
                                "windows-latest py3.11 notci1");
            assert_int_equal(json_integer_value(json_object_get(v, "failures")), 4);
            seen++;
        }
        if (!strcmp(name, "macos-latest-3.14-default-ci1")) {
            assert_string_equal(json_string_value(json_object_get(v, "os_family")), "macOS");
            assert_int_equal(json_integer_value(json_object_get(v, "failures")), 0);
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    json_decref(doc);
    const char *table[] = {"retrig", "flakes", "--project", REPO, "--format", "table", NULL};
    assert_int_equal(rt_test_run(t->env, table, &out, NULL), 0);
    assert_non_null(strstr(out, "fails on Windows only (2 of 4 variants)"));
    assert_non_null(strstr(out, "failing variants: windows-latest py3.11 notci1 4/4, "
                                "windows-latest py3.12 ci1 4/4 (of 4)"));
    free(out);
    /* the page */
    char page_path[] = "/tmp/retrig_os_page_XXXXXX";
    int fd = mkstemp(page_path);
    assert_true(fd >= 0);
    close(fd);
    char out_arg[64];
    snprintf(out_arg, sizeof out_arg, "--out=%s", page_path);
    const char *report[] = {"retrig", "report", "--project", REPO, out_arg, NULL};
    assert_int_equal(rt_test_run(t->env, report, &out, NULL), 0);
    free(out);
    FILE *f = fopen(page_path, "r");
    assert_non_null(f);
    static char html[1 << 20];
    size_t n = fread(html, 1, sizeof html - 1, f);
    html[n] = '\0';
    fclose(f);
    unlink(page_path);
    assert_non_null(strstr(html, ">only on Windows</span>"));
    /* the dry-run issue */
    const char *issues[] = {"retrig",    "flaky-issues", "--project", REPO,
                            "--dry-run", "--format",     "table",     NULL};
    assert_int_equal(rt_test_run(t->env, issues, &out, NULL), 0);
    assert_non_null(strstr(out, "fails on Windows only"));
    free(out);
}

/* GitHub does not charge a conditional request answered 304, nor does --max-requests: two
 * unchanged workflow listings fit a budget of 2 after the repository's own request. */
static void test_not_modified_answers_cost_no_budget(void **state)
{
    gh_test *t = *state;
    char *xml = junit(NULL, false);
    json_t *runs = json_pack(
        "[o]", run(8900, "fix", 90, NULL, 3600,
                   json_pack("[o]", attempt("success", 3600,
                                            json_pack("[o]", artifact("junit", xml, false))))));
    free(xml);
    load(t, runs, NULL);
    const char *argv[] = {"retrig",     "collect-github", "--repo",     REPO,        "--since=7d",
                          "--workflow", "tests.yaml",     "--workflow", "lint.yaml", NULL,
                          NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(run_cli(t, NULL, argv, &out, &err), 0);
    assert_non_null(strstr(out, "1 attempts stored"));
    free(out);
    free(err);
    rt_fake_reset(&t->h->fake);
    argv[9] = "--max-requests=2";
    assert_int_equal(run_cli(t, NULL, argv, &out, &err), 0);
    assert_null(strstr(out, "stopped:"));
    assert_non_null(strstr(out, "1 requests"));
    free(out);
    free(err);
    json_t *calls = rt_fake_calls(&t->h->fake, "/repos/acme/widgets/actions/workflows/");
    assert_int_equal(json_array_size(calls), 2);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(calls, i), "status")),
                         304);
    json_decref(calls);
    char *reason = rt_ch_sql_text(
        t->h,
        "SELECT string_agg(coalesce(last_stop_reason, 'none'), ',') FROM github_collect_state", 0,
        NULL);
    assert_string_equal(reason, "none,none");
    free(reason);
}

/* By default only reports are downloaded: dask's cluster dumps and event file are not. */
static void test_default_pattern_downloads_reports_only(void **state)
{
    gh_test *t = *state;
    char *xml = junit(NULL, false);
    json_t *dumps =
        json_pack("{s:s, s:{s:s}}", "name", "ubuntu-latest-3.12-default-ci1_cluster_dumps", "files",
                  "test_cluster_dump/test_x.yaml", "workers: {}");
    json_t *event = json_pack("{s:s, s:{s:s}}", "name", "Event File", "files", "event.json", "{}");
    json_t *runs = json_pack(
        "[o]", run(8950, "fix", 95, NULL, 3600,
                   json_pack("[o]", attempt("success", 3600,
                                            json_pack("[o, o, o]", artifact("junit", xml, false),
                                                      dumps, event)))));
    free(xml);
    load(t, runs, NULL);
    char *out = NULL;
    assert_int_equal(collect(t, &out, NULL, NULL, NULL), 0);
    assert_non_null(strstr(out, "1 attempts stored"));
    free(out);
    json_t *downloads = rt_fake_calls(&t->h->fake, "/storage/");
    assert_int_equal(json_array_size(downloads), 1);
    json_decref(downloads);
    assert_int_equal(sql_int(t, "SELECT count(*) FROM history_tests"), NTEST);
}

/* A matrix job that stops uploading its report is a gap (issue 31): two runs report on
 * Ubuntu and Windows, the third on Ubuntu alone; `retrig flakes` lists the third's missing
 * Windows report, and neither earlier run nor a partial re-run attempt is blamed. */
static void test_a_variant_that_stops_reporting_is_a_gap(void **state)
{
    gh_test *t = *state;
    char *xml = junit(NULL, false);
    json_t *runs = json_pack(
        "[o, o, o]",
        run(9101, "main", 0, NULL, 7200,
            json_pack("[o]", attempt("success", 7200,
                                     json_pack("[o, o]", artifact("junit-ubuntu", xml, false),
                                               artifact("junit-windows", xml, false))))),
        run(9102, "main", 0, NULL, 5400,
            json_pack("[o]", attempt("success", 5400,
                                     json_pack("[o, o]", artifact("junit-ubuntu", xml, false),
                                               artifact("junit-windows", xml, false))))),
        run(9103, "main", 0, NULL, 3600,
            json_pack(
                "[o, o]",
                attempt("failure", 3600, json_pack("[o]", artifact("junit-ubuntu", xml, false))),
                attempt("success", 1800,
                        json_pack("[o]", artifact("junit-ubuntu-attempt2", xml, false))))));
    free(xml);
    load(t, runs, NULL);
    char *out = NULL;
    assert_int_equal(collect(t, &out, NULL, NULL, NULL), 0);
    free(out);
    const char *argv[] = {"retrig", "flakes", "--project", REPO, "--format", "json", NULL};
    assert_int_equal(rt_test_run(t->env, argv, &out, NULL), 0);
    json_t *doc = json_loads(out, 0, NULL);
    assert_non_null(doc);
    json_t *cov = json_object_get(doc, "coverage");
    assert_int_equal(json_integer_value(
                         json_object_get(json_object_get(cov, "gaps_by_kind"), "missing-variant")),
                     1);
    assert_int_equal(json_integer_value(json_object_get(cov, "attempts_with_gaps")), 1);
    json_t *gaps = json_object_get(doc, "gaps");
    assert_int_equal(json_array_size(gaps), 1);
    json_t *g = json_array_get(gaps, 0);
    assert_string_equal(json_string_value(json_object_get(g, "kind")), "missing-variant");
    assert_string_equal(json_string_value(json_object_get(g, "artifact")), "junit-windows");
    assert_int_equal(json_integer_value(json_object_get(g, "run_id")), 9103);
    assert_int_equal(json_integer_value(json_object_get(g, "attempt")), 1);
    json_decref(doc);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_killed_collector_resumes_and_stores_each_outcome_once,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_limit_stops_cleanly_and_resumes_after_the_reset,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_rerun_attempt_is_a_second_outcome_and_a_flip, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_unusable_runs_are_gaps_and_an_unchanged_listing_is_a_304, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_flaky_rerun_within_an_attempt_is_a_flip_and_a_bad_testcase_a_gap, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_api_redirects_are_followed_on_the_same_host_only,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_capped_listing_is_split_into_created_windows, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_secondary_limit_without_retry_after_backs_off_exponentially, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fork_and_merged_prs_get_their_number, setup, teardown),
        cmocka_unit_test_setup_teardown(test_variants_are_kept_and_flips_compare_the_same_variant,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_variants_read_as_os_python_and_partition, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_not_modified_answers_cost_no_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_pattern_downloads_reports_only, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_variant_that_stops_reporting_is_a_gap, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
