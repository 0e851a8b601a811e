/* SPDX-License-Identifier: MPL-2.0 */
/* test_github.c - the pure GitHub parsers and decisions (common/core/github.h): Link headers,
 * workflow runs (with and without pull requests, forks, re-run attempts, hostile input),
 * artifacts, issues, times, branch keys, attempts of artifacts, the rate-limit reserve;
 * and the bounded zip reader (common/io/artifact_zip.h) against zip bombs. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "common/core/github.h"
#include "common/io/artifact_zip.h"

static void test_link_header_gives_the_next_page(void **state)
{
    (void)state;
    char *next = rt_gh_link_next(
        "<https://api.github.com/repositories/1/actions/runs?per_page=100&page=2>; rel=\"next\", "
        "<https://api.github.com/repositories/1/actions/runs?per_page=100&page=9>; rel=\"last\"");
    assert_string_equal(next,
                        "https://api.github.com/repositories/1/actions/runs?per_page=100&page=2");
    free(next);
    /* next after prev, unquoted, several rels, odd spacing and case */
    next = rt_gh_link_next("<http://h/x?page=1>; rel=prev ,<http://h/x?page=3> ;REL=\"last next\"");
    assert_string_equal(next, "http://h/x?page=3");
    free(next);
    /* last page: no next */
    assert_null(
        rt_gh_link_next("<https://a/x?page=1>; rel=\"first\", <https://a/x?page=8>; rel=\"prev\""));
    /* malformed or hostile */
    assert_null(rt_gh_link_next(NULL));
    assert_null(rt_gh_link_next(""));
    assert_null(rt_gh_link_next("https://a/x; rel=\"next\""));
    assert_null(rt_gh_link_next("<https://a/x; rel=\"next\""));
    assert_null(rt_gh_link_next("<https://a/x>; rel=\"next"));
    assert_null(rt_gh_link_next("<javascript:alert(1)>; rel=\"next\""));
    assert_null(rt_gh_link_next("<>; rel=\"next\""));
    char *huge = malloc(RT_GH_MAX_LINK + 64);
    memset(huge, 'a', RT_GH_MAX_LINK + 10);
    memcpy(huge, "<https://", 9);
    strcpy(huge + RT_GH_MAX_LINK + 10, ">; rel=next");
    assert_null(rt_gh_link_next(huge));
    free(huge);
}

static void test_times_parse_in_utc_and_offsets(void **state)
{
    (void)state;
    time_t t;
    assert_int_equal(rt_gh_parse_time("2024-05-01T10:00:00Z", &t), RT_OK);
    assert_int_equal((long long)t, 1714557600LL);
    assert_int_equal(rt_gh_parse_time("2024-05-01T12:00:00.123+02:00", &t), RT_OK);
    assert_int_equal((long long)t, 1714557600LL);
    assert_int_equal(rt_gh_parse_time("2024-02-31T10:00:00Z", &t), RT_EINVAL);
    assert_int_equal(rt_gh_parse_time("2024-05-01 10:00:00Z", &t), RT_EINVAL);
    assert_int_equal(rt_gh_parse_time("2024-05-01T10:00:00", &t), RT_EINVAL);
    assert_int_equal(rt_gh_parse_time("2024-05-01T10:00:00Zjunk", &t), RT_EINVAL);
    assert_int_equal(rt_gh_parse_time("1e9", &t), RT_EINVAL);
}

#define RUN(extra)                                                                                 \
    "{\"id\": 30433642, \"name\": \"Tests\", \"head_branch\": \"fix-flaky\", "                     \
    "\"head_sha\": \"acb5820ced9479c074f688cc328bf03f341a511d\", "                                 \
    "\"path\": \".github/workflows/tests.yaml\", \"event\": \"pull_request\", "                    \
    "\"status\": \"completed\", \"conclusion\": \"failure\", \"workflow_id\": 159038, "            \
    "\"created_at\": \"2024-05-01T10:00:00Z\", \"run_started_at\": \"2024-05-01T11:30:00Z\", "     \
    "\"html_url\": \"https://github.com/dask/distributed/actions/runs/30433642\", "                \
    "\"repository\": {\"full_name\": \"dask/distributed\"}" extra "}"

static void test_runs_with_and_without_pull_requests_forks_and_attempts(void **state)
{
    (void)state;
    const char *page = "{\"total_count\": 2, \"workflow_runs\": [" //
        RUN(", \"run_attempt\": 2, \"head_repository\": {\"full_name\": \"dask/distributed\"}, "
            "\"pull_requests\": [{\"number\": 8612, \"head\": {\"ref\": \"fix-flaky\"}}]") ", " //
        RUN(", \"head_repository\": {\"full_name\": \"alice/distributed\"},"
            " \"pull_requests\": []") "]}";
    rt_gh_runs runs;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_gh_parse_runs(page, strlen(page), &runs, err), RT_OK);
    assert_int_equal(runs.count, 2);
    assert_int_equal(runs.skipped, 0);
    char key[300];
    rt_gh_run *pr = &runs.items[0], *fork = &runs.items[1];
    assert_int_equal(pr->attempt, 2);
    assert_int_equal(pr->pr, 8612);
    assert_int_equal((long long)pr->run_started_at, 1714563000LL);
    assert_int_equal((long long)pr->created_at, 1714557600LL);
    rt_gh_branch_key(pr, key, sizeof key);
    assert_string_equal(key, "pr:8612");
    assert_false(rt_gh_is_main(pr, "main"));
    assert_int_equal(fork->pr, 0);
    assert_int_equal(fork->attempt, 1);
    rt_gh_branch_key(fork, key, sizeof key);
    assert_string_equal(key, "fork:alice/distributed:fix-flaky");
    rt_gh_runs_free(&runs);

    const char *text =
        "{\"workflow_runs\": [{\"id\": 1, \"head_branch\": \"main\", \"head_sha\": \"abcdef12\","
        " \"event\": \"pull_request\", \"status\": \"completed\","
        " \"created_at\": \"2024-05-01T10:00:00Z\", \"repository\": {\"full_name\": \"o/r\"},"
        " \"head_repository\": {\"full_name\": \"o/r\"}}]}";
    assert_int_equal(rt_gh_parse_runs(text, strlen(text), &runs, err), RT_OK);
    assert_int_equal(runs.count, 1);
    rt_gh_branch_key(&runs.items[0], key, sizeof key);
    assert_string_equal(key, "main");
    assert_false(rt_gh_is_main(&runs.items[0], "main")); /* event pull_request */
    free(runs.items[0].event);
    runs.items[0].event = strdup("push");
    assert_true(rt_gh_is_main(&runs.items[0], "main"));
    assert_false(rt_gh_is_main(&runs.items[0], "develop"));
    rt_gh_runs_free(&runs);
}

/* GitHub sends "head_branch": null for some runs (a deleted branch, a tag's run): such a run
 * is kept, keyed by its pull request or else by its commit, and is never the main branch. */
static void test_runs_with_a_null_head_branch_are_kept(void **state)
{
    (void)state;
    const char *page =
        "{\"total_count\": 3, \"workflow_runs\": ["
        "{\"id\": 21, \"head_branch\": null, \"head_sha\": \"abcdef12\", \"event\": \"push\","
        " \"status\": \"completed\", \"conclusion\": \"failure\","
        " \"created_at\": \"2024-05-01T10:00:00Z\", \"repository\": {\"full_name\": \"o/r\"}},"
        "{\"id\": 22, \"head_sha\": \"abcdef13\", \"event\": \"pull_request\","
        " \"status\": \"completed\", \"conclusion\": \"failure\","
        " \"pull_requests\": [{\"number\": 77}], \"head_branch\": null,"
        " \"created_at\": \"2024-05-01T10:00:00Z\", \"repository\": {\"full_name\": \"o/r\"}},"
        "{\"id\": 23, \"head_branch\": 5, \"head_sha\": \"abcdef14\", \"event\": \"push\","
        " \"status\": \"completed\", \"conclusion\": \"failure\","
        " \"created_at\": \"2024-05-01T10:00:00Z\", \"repository\": {\"full_name\": \"o/r\"}}"
        "]}";
    rt_gh_runs runs;
    char err[RT_ERRSTR_SIZE] = "", key[300];
    assert_int_equal(rt_gh_parse_runs(page, strlen(page), &runs, err), RT_OK);
    assert_int_equal(runs.count, 2);
    assert_int_equal(runs.skipped, 1); /* a branch that is no string is still refused */
    assert_string_equal(runs.items[0].head_branch, "");
    rt_gh_branch_key(&runs.items[0], key, sizeof key);
    assert_string_equal(key, "commit:abcdef12");
    assert_false(rt_gh_is_main(&runs.items[0], "main"));
    assert_false(rt_gh_is_main(&runs.items[0], ""));
    rt_gh_branch_key(&runs.items[1], key, sizeof key);
    assert_string_equal(key, "pr:77");
    rt_gh_runs_free(&runs);
}

static void test_hostile_runs_are_skipped_or_refused(void **state)
{
    (void)state;
    rt_gh_runs runs;
    char err[RT_ERRSTR_SIZE] = "";
    /* not the expected object: refused */
    const char *bad[] = {"",
                         "[]",
                         "{\"workflow_runs\": {}}",
                         "{\"workflow_runs\": [1",
                         "null",
                         "{\"workflow_runs\": [], \"workflow_runs\": []}",
                         "{\"workflow_runs\": [{\"head_branch\": \"b\\u0000c\"}]}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rt_gh_parse_runs(bad[i], strlen(bad[i]), &runs, err), RT_EPROTO);
    /* single runs failing a check: skipped and counted, the others kept */
    const char *page =
        "{\"workflow_runs\": [1, \"x\", {}, "
        "{\"id\": 5, \"head_branch\": \"a b\", \"head_sha\": \"abcdef12\", \"event\": \"push\","
        " \"status\": \"completed\", \"created_at\": \"2024-05-01T10:00:00Z\","
        " \"repository\": {\"full_name\": \"o/r\"}}, "
        "{\"id\": 6, \"head_branch\": \"b\", \"head_sha\": \"not-hex!\", \"event\": \"push\","
        " \"status\": \"completed\", \"created_at\": \"2024-05-01T10:00:00Z\","
        " \"repository\": {\"full_name\": \"o/r\"}}, "
        "{\"id\": 7, \"head_branch\": \"b\", \"head_sha\": \"abcdef12\", \"event\": \"push\","
        " \"status\": \"completed\", \"created_at\": \"yesterday\","
        " \"repository\": {\"full_name\": \"o/r\"}}, "
        "{\"id\": 9, \"head_branch\": \"b\", \"head_sha\": \"abcdef12\", \"event\": \"push\","
        " \"status\": \"completed\", \"created_at\": \"2024-05-01T10:00:00Z\", \"run_attempt\": "
        "1e3,"
        " \"repository\": {\"full_name\": \"../r\"}}, "
        "{\"id\": 10, \"head_branch\": \"b\", \"head_sha\": \"abcdef12\", \"event\": \"push\","
        " \"status\": \"completed\", \"created_at\": \"2024-05-01T10:00:00Z\", \"run_attempt\": "
        "101,"
        " \"repository\": {\"full_name\": \"o/r\"}}, "
        "{\"id\": 11, \"head_branch\": \"ok\", \"head_sha\": \"abcdef12\", \"event\": \"push\","
        " \"status\": \"completed\", \"created_at\": \"2024-05-01T10:00:00Z\","
        " \"pull_requests\": [{\"number\": \"12\"}], \"repository\": {\"full_name\": \"o/r\"}}]}";
    assert_int_equal(rt_gh_parse_runs(page, strlen(page), &runs, err), RT_OK);
    assert_int_equal(runs.count, 1);
    assert_int_equal(runs.skipped, 8);
    assert_int_equal(runs.items[0].id, 11);
    assert_int_equal(runs.items[0].pr, 0); /* a number as a string is no number */
    rt_gh_runs_free(&runs);
}

static void test_artifacts_and_their_attempts(void **state)
{
    (void)state;
    const char *page =
        "{\"total_count\": 3, \"artifacts\": ["
        "{\"id\": 11, \"name\": \"test-results\", \"size_in_bytes\": 512, \"expired\": false,"
        " \"created_at\": \"2024-05-01T10:20:00Z\", \"workflow_run\": {\"id\": 99}},"
        "{\"id\": 12, \"name\": \"test-results-2\", \"size_in_bytes\": 0, \"expired\": true,"
        " \"created_at\": \"2024-05-01T11:40:00Z\"},"
        "{\"id\": 13, \"name\": \"\", \"size_in_bytes\": 1, \"created_at\": "
        "\"2024-05-01T11:40:00Z\"}]}";
    rt_gh_artifacts a;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_gh_parse_artifacts(page, strlen(page), &a, err), RT_OK);
    assert_int_equal(a.count, 2);
    assert_int_equal(a.skipped, 1);
    assert_int_equal(a.items[0].run_id, 99);
    assert_false(a.items[0].expired);
    assert_true(a.items[1].expired);
    /* attempt 1 started 10:00, attempt 2 at 11:30 */
    time_t starts[2] = {1714557600, 1714563000};
    assert_int_equal(rt_gh_artifact_attempt(a.items[0].created_at, starts, 2), 1);
    assert_int_equal(rt_gh_artifact_attempt(a.items[1].created_at, starts, 2), 2);
    assert_int_equal(rt_gh_artifact_attempt(1000, starts, 2), 1);
    assert_int_equal(rt_gh_artifact_attempt(starts[1], starts, 2), 2);
    rt_gh_artifacts_free(&a);
}

static void test_issues_keep_their_first_body_line_and_flag_pull_requests(void **state)
{
    (void)state;
    const char *page =
        "[{\"number\": 4, \"html_url\": \"https://github.com/o/r/issues/4\","
        " \"state\": \"open\", \"body\": \"<!-- retrig-flaky: 00ff -->\\r\\nrest\"},"
        " {\"number\": 5, \"html_url\": \"u\", \"state\": \"closed\", \"body\": null,"
        " \"pull_request\": {}}, {\"number\": 0}]";
    rt_gh_issues issues;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_gh_parse_issues(page, strlen(page), &issues, err), RT_OK);
    assert_int_equal(issues.count, 2);
    assert_int_equal(issues.skipped, 1);
    assert_string_equal(issues.items[0].body_head, "<!-- retrig-flaky: 00ff -->");
    assert_false(issues.items[0].pull_request);
    assert_true(issues.items[1].pull_request);
    assert_string_equal(issues.items[1].body_head, "");
    rt_gh_issues_free(&issues);
    const char *list =
        "[{\"id\": 5, \"body\": \"<!-- retrig-flaky-figures -->\\nx\"}, {\"id\": \"6\"}, 3]";
    rt_gh_comments comments;
    assert_int_equal(rt_gh_parse_comments(list, strlen(list), &comments, err), RT_OK);
    assert_int_equal(comments.count, 1);
    assert_int_equal(comments.skipped, 2);
    assert_string_equal(comments.items[0].body_head, "<!-- retrig-flaky-figures -->");
    rt_gh_comments_free(&comments);
    long long id;
    assert_int_equal(rt_gh_parse_id("{\"id\": 77}", 10, &id, err), RT_OK);
    assert_int_equal(id, 77);
    assert_int_equal(rt_gh_parse_id("{\"id\": -1}", 10, &id, err), RT_EPROTO);
    char *branch = NULL;
    const char *repo = "{\"full_name\": \"o/r\", \"default_branch\": \"main\"}";
    assert_int_equal(rt_gh_parse_default_branch(repo, strlen(repo), &branch, err), RT_OK);
    assert_string_equal(branch, "main");
    free(branch);
}

static void test_rate_limit_reserve(void **state)
{
    (void)state;
    assert_false(rt_gh_rate_exhausted(-1, 50)); /* unknown: go on */
    assert_false(rt_gh_rate_exhausted(51, 50));
    assert_true(rt_gh_rate_exhausted(50, 50));
    assert_true(rt_gh_rate_exhausted(0, 0));
    assert_false(rt_gh_rate_exhausted(1, 0));
    assert_true(rt_gh_valid_repo("dask/distributed"));
    assert_false(rt_gh_valid_repo("dask/distributed/x"));
    assert_false(rt_gh_valid_repo("../x"));
    assert_false(rt_gh_valid_repo("a/.."));
    assert_false(rt_gh_valid_repo("a b/c"));
}

/* ---- zips ---- */

typedef struct zip_entry {
    const char *name;
    const char *data;
    size_t len;
} zip_entry;

/* An in-memory zip of the entries (deflated), malloc'd. */
static char *make_zip(const zip_entry *entries, size_t n, size_t *len)
{
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &error);
    assert_non_null(src);
    zip_source_keep(src);
    zip_t *z = zip_open_from_source(src, ZIP_TRUNCATE, &error);
    assert_non_null(z);
    for (size_t i = 0; i < n; i++) {
        zip_source_t *s = zip_source_buffer(z, entries[i].data, entries[i].len, 0);
        assert_non_null(s);
        assert_true(zip_file_add(z, entries[i].name, s, ZIP_FL_ENC_UTF_8) >= 0);
    }
    assert_int_equal(zip_close(z), 0);
    zip_stat_t st;
    assert_int_equal(zip_source_stat(src, &st), 0);
    char *out = malloc(st.size);
    assert_int_equal(zip_source_open(src), 0);
    assert_int_equal(zip_source_read(src, out, st.size), (zip_int64_t)st.size);
    zip_source_close(src);
    zip_source_free(src);
    *len = st.size;
    return out;
}

typedef struct seen {
    char names[16][64];
    int rcs[16];
    size_t lens[16];
    size_t n;
} seen;

static int collect(void *ctx, const char *name, const char *data, size_t len, int rc)
{
    seen *s = ctx;
    if (s->n < 16) {
        snprintf(s->names[s->n], 64, "%s", name);
        s->rcs[s->n] = rc;
        s->lens[s->n] = len;
        if (rc == RT_OK) assert_int_equal(data[len], '\0');
        s->n++;
    }
    return RT_OK;
}

static void test_zip_reads_matching_files_within_caps(void **state)
{
    (void)state;
    char *big = malloc(1 << 20);
    memset(big, 'x', 1 << 20); /* a megabyte of one byte: deflates to ~1 kB, a small bomb */
    zip_entry entries[] = {{"reports/pytest.xml", "<testsuites/>", 13},
                           {"reports/", "", 0},
                           {"reports/coverage.json", "{}", 2},
                           {"reports/bomb.xml", big, 1 << 20},
                           {"reports/other.xml", "<testsuite/>", 12}};
    size_t len;
    char *zip = make_zip(entries, 5, &len);
    assert_true(len < 20000);
    rt_zip_limits limits = {100, 4096, 1 << 22};
    rt_zip_stats stats;
    seen s = {0};
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_zip_each(zip, len, &limits, "*.xml", collect, &s, &stats, err), RT_OK);
    assert_int_equal(stats.entries, 5);
    assert_int_equal(stats.matched, 3);
    assert_int_equal(stats.too_big, 1);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.names[0], "reports/pytest.xml");
    assert_int_equal(s.rcs[0], RT_OK);
    assert_int_equal(s.lens[0], 13);
    assert_string_equal(s.names[1], "reports/bomb.xml");
    assert_int_equal(s.rcs[1], RT_ETOOBIG);
    assert_int_equal(s.rcs[2], RT_OK);

    /* the total cap stops the walk */
    rt_zip_limits tight_total = {100, 2 << 20, 100000};
    memset(&s, 0, sizeof s);
    assert_int_equal(rt_zip_each(zip, len, &tight_total, "*.xml", collect, &s, &stats, err),
                     RT_ETOOBIG);
    assert_non_null(strstr(err, "in all"));
    /* too many entries: refused before reading */
    rt_zip_limits few = {4, 4096, 1 << 22};
    memset(&s, 0, sizeof s);
    assert_int_equal(rt_zip_each(zip, len, &few, "*.xml", collect, &s, &stats, err), RT_ETOOBIG);
    assert_int_equal(s.n, 0);
    /* not a zip, cut short, empty */
    assert_int_equal(rt_zip_each("PK\3\4garbage", 11, &limits, "*", collect, &s, &stats, err),
                     RT_EPROTO);
    assert_int_equal(rt_zip_each(zip, len / 2, &limits, "*", collect, &s, &stats, err), RT_EPROTO);
    assert_int_equal(rt_zip_each(zip, 0, &limits, "*", collect, &s, &stats, err), RT_EPROTO);
    free(zip);
    free(big);
}

/* Flips the CRC-32 of every entry (local and central headers) of a zip made by make_zip. */
static void break_crcs(char *zip, size_t len)
{
    for (size_t i = 0; i + 20 < len; i++) {
        if (!memcmp(zip + i, "PK\3\4", 4)) zip[i + 14] ^= 0x5a;
        if (!memcmp(zip + i, "PK\1\2", 4)) zip[i + 16] ^= 0x5a;
    }
}

/* Entries failing their CRC are inflated to their end before the check fails: that work
 * counts toward the total cap, and the third such entry ends the artifact (a 76 KB archive
 * of 200 such entries inflated 200 x 64 MiB before). */
static void test_zip_entries_failing_their_crc_are_capped(void **state)
{
    (void)state;
    char *big = malloc(1 << 20);
    memset(big, 'y', 1 << 20);
    zip_entry entries[8];
    char names[8][16];
    for (int i = 0; i < 8; i++) {
        snprintf(names[i], sizeof names[i], "r%d.xml", i);
        entries[i] = (zip_entry){names[i], big, 1 << 20};
    }
    size_t len = 0;
    char *zip = make_zip(entries, 8, &len);
    break_crcs(zip, len);
    rt_zip_limits limits = {100, 2 << 20, 64 << 20};
    rt_zip_stats stats;
    seen s = {0};
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_zip_each(zip, len, &limits, "*.xml", collect, &s, &stats, err), RT_EPROTO);
    assert_non_null(strstr(err, "3 damaged entries"));
    assert_int_equal(s.n, 3);
    for (size_t i = 0; i < s.n; i++) assert_int_equal(s.rcs[i], RT_EPROTO);
    assert_int_equal(stats.failed, 3);
    assert_int_equal(stats.total_bytes, 3u << 20); /* inflated, then refused: counted */
    /* a tighter total cap ends the walk on the bytes of failed entries alone */
    rt_zip_limits tight = {100, 2 << 20, (1 << 20) + 1000};
    memset(&s, 0, sizeof s);
    assert_int_equal(rt_zip_each(zip, len, &tight, "*.xml", collect, &s, &stats, err), RT_ETOOBIG);
    assert_true(s.n <= 1);
    free(zip);
    free(big);
}

/* The default artifact pattern takes reports by their usual names and leaves the rest;
 * dask names its reports by matrix job, so it lists everything but its dumps. */
static void test_artifact_patterns_take_reports_only(void **state)
{
    (void)state;
    const char *def = RT_GH_ARTIFACT_PATTERN_DEFAULT;
    assert_true(rt_gh_artifact_wanted(def, "junit"));
    assert_true(rt_gh_artifact_wanted(def, "JUnit-results-windows"));
    assert_true(rt_gh_artifact_wanted(def, "test-results-ubuntu-3.12"));
    assert_true(rt_gh_artifact_wanted(def, "surefire-test-reports"));
    assert_true(rt_gh_artifact_wanted(def, "surefire-reports")); /* Surefire's own folder */
    assert_false(rt_gh_artifact_wanted(def, "ubuntu-latest-3.12-default-ci1_cluster_dumps"));
    assert_false(rt_gh_artifact_wanted(def, "Event File"));
    assert_false(rt_gh_artifact_wanted(def, "coverage-report"));
    const char *dask = "*,!*_cluster_dumps,!Event File";
    assert_true(rt_gh_artifact_wanted(dask, "ubuntu-latest-3.12-default-ci1"));
    assert_true(rt_gh_artifact_wanted(dask, "windows-latest-3.11-default-notci1"));
    assert_false(rt_gh_artifact_wanted(dask, "ubuntu-latest-3.12-default-ci1_cluster_dumps"));
    assert_false(rt_gh_artifact_wanted(dask, "Event File"));
    assert_true(rt_gh_artifact_wanted("*", "anything"));
    assert_false(rt_gh_artifact_wanted("", "anything"));
    assert_false(rt_gh_artifact_wanted("!*", "anything"));
}

/* An artifact's redirect to its storage: never down from https to http. */
static void test_redirects_never_go_from_https_to_http(void **state)
{
    (void)state;
    const char *api = "https://api.github.com/repos/o/r/actions/artifacts/1/zip";
    assert_true(rt_gh_redirect_allowed(api, "https://productionresultssa1.blob.core.windows.net/"
                                            "actions-results/x.zip?sig=abc"));
    assert_false(rt_gh_redirect_allowed(api, "http://productionresultssa1.blob.core.windows.net/"
                                             "actions-results/x.zip?sig=abc"));
    assert_false(rt_gh_redirect_allowed(api, "HTTP://evil.example/x.zip"));
    assert_false(rt_gh_redirect_allowed(api, "ftp://evil.example/x.zip"));
    assert_false(rt_gh_redirect_allowed(api, "file:///etc/passwd"));
    /* a plain-http API (a test double, a proxy) may be sent on to http or https */
    assert_true(rt_gh_redirect_allowed("http://127.0.0.1:8080/repos/o/r", "http://127.0.0.1/s"));
    assert_true(rt_gh_redirect_allowed("http://127.0.0.1:8080/repos/o/r", "https://x.test/s"));
}

/* A pull request listing as GitHub documents it (GET /pulls?head=...&state=all): the run's
 * commit picks its pull request, else the newest opened before the run; another fork's
 * branch of the same name or a pull request into another repository is never it. */
static void test_pull_request_of_a_fork_run(void **state)
{
    (void)state;
    static const char listing[] =
        "[{\"number\": 9, \"state\": \"open\", \"author_association\": \"NONE\","
        "  \"created_at\": \"2024-05-03T00:00:00Z\","
        "  \"head\": {\"ref\": \"fix\", \"sha\": \"cccccccc\", \"repo\": {\"full_name\": "
        "\"alice/r\"}},"
        "  \"base\": {\"ref\": \"main\", \"repo\": {\"full_name\": \"o/r\"}}},"
        " {\"number\": 8, \"state\": \"closed\", \"author_association\": \"CONTRIBUTOR\","
        "  \"created_at\": \"2024-04-20T00:00:00Z\", \"merged_at\": \"2024-04-22T00:00:00Z\","
        "  \"head\": {\"ref\": \"fix\", \"sha\": \"bbbbbbbb\", \"repo\": {\"full_name\": "
        "\"alice/r\"}},"
        "  \"base\": {\"ref\": \"main\", \"repo\": {\"full_name\": \"o/r\"}}},"
        " {\"number\": 7, \"author_association\": \"OWNER\", \"created_at\": "
        "\"2024-04-01T00:00:00Z\","
        "  \"head\": {\"ref\": \"fix\", \"sha\": \"aaaaaaaa\", \"repo\": {\"full_name\": "
        "\"mallory/r\"}},"
        "  \"base\": {\"ref\": \"main\", \"repo\": {\"full_name\": \"o/r\"}}}]";
    rt_gh_run run = {.repository = "o/r",
                     .head_repository = "alice/r",
                     .head_branch = "fix",
                     .head_sha = "cccccccc",
                     .event = "pull_request"};
    rt_gh_pull pull;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_gh_pull_for_run(listing, strlen(listing), &run, &pull, err), RT_OK);
    assert_int_equal(pull.number, 9);
    assert_string_equal(pull.association, "NONE");
    /* an older commit of the branch: the pull request open then (8), not the newest */
    run.head_sha = "dddddddd";
    assert_int_equal(rt_gh_parse_time("2024-04-21T00:00:00Z", &run.created_at), RT_OK);
    assert_int_equal(rt_gh_pull_for_run(listing, strlen(listing), &run, &pull, err), RT_OK);
    assert_int_equal(pull.number, 8);
    assert_string_equal(pull.association, "CONTRIBUTOR");
    /* mallory's branch "fix" with alice's listing: none is hers */
    run.head_repository = "mallory/x";
    assert_int_equal(rt_gh_pull_for_run(listing, strlen(listing), &run, &pull, err), RT_ENOTFOUND);
    assert_int_equal(pull.number, 0);
    /* a pull request into another repository is not this run's */
    run.head_repository = "alice/r";
    run.repository = "other/r";
    assert_int_equal(rt_gh_pull_for_run(listing, strlen(listing), &run, &pull, err), RT_ENOTFOUND);
    assert_int_equal(rt_gh_pull_for_run("{}", 2, &run, &pull, err), RT_EPROTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link_header_gives_the_next_page),
        cmocka_unit_test(test_times_parse_in_utc_and_offsets),
        cmocka_unit_test(test_runs_with_and_without_pull_requests_forks_and_attempts),
        cmocka_unit_test(test_runs_with_a_null_head_branch_are_kept),
        cmocka_unit_test(test_hostile_runs_are_skipped_or_refused),
        cmocka_unit_test(test_artifacts_and_their_attempts),
        cmocka_unit_test(test_issues_keep_their_first_body_line_and_flag_pull_requests),
        cmocka_unit_test(test_rate_limit_reserve),
        cmocka_unit_test(test_zip_reads_matching_files_within_caps),
        cmocka_unit_test(test_zip_entries_failing_their_crc_are_capped),
        cmocka_unit_test(test_redirects_never_go_from_https_to_http),
        cmocka_unit_test(test_artifact_patterns_take_reports_only),
        cmocka_unit_test(test_pull_request_of_a_fork_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
