/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_github.c - libFuzzer target for the GitHub answers collect-github and flaky-issues
 * read (common/core/github.h): the same bytes as a run listing, one run, an artifact listing,
 * an issue listing, one issue, a comment listing, an id answer, a repository, a pull request
 * listing and a Link header. Invariants: every kept run passes the checks (positive id,
 * attempt from 1 to RT_GH_MAX_ATTEMPTS, a branch key that fits), every kept artifact has a
 * name, a pull request found has a positive number, a next link is http(s). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/github.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char errstr[RT_ERRSTR_SIZE];
    rt_gh_runs runs;
    if (rt_gh_parse_runs(text, size, &runs, errstr) == RT_OK) {
        for (size_t i = 0; i < runs.count; i++) {
            const rt_gh_run *r = &runs.items[i];
            if (r->id <= 0 || r->attempt < 1 || r->attempt > RT_GH_MAX_ATTEMPTS) __builtin_trap();
            char key[600];
            rt_gh_branch_key(r, key, sizeof key);
            (void)rt_gh_is_main(r, "main");
            (void)rt_gh_run_cancelled(r);
        }
        rt_gh_runs_free(&runs);
    }
    rt_gh_run run;
    if (rt_gh_parse_run(text, size, &run, errstr) == RT_OK) rt_gh_run_free(&run);
    rt_gh_artifacts artifacts;
    if (rt_gh_parse_artifacts(text, size, &artifacts, errstr) == RT_OK) {
        for (size_t i = 0; i < artifacts.count; i++)
            if (!artifacts.items[i].name || !artifacts.items[i].name[0]) __builtin_trap();
        rt_gh_artifacts_free(&artifacts);
    }
    rt_gh_issues issues;
    if (rt_gh_parse_issues(text, size, &issues, errstr) == RT_OK) rt_gh_issues_free(&issues);
    rt_gh_issue issue;
    if (rt_gh_parse_issue(text, size, &issue, errstr) == RT_OK) rt_gh_issue_free(&issue);
    rt_gh_comments comments;
    if (rt_gh_parse_comments(text, size, &comments, errstr) == RT_OK)
        rt_gh_comments_free(&comments);
    long long id;
    (void)rt_gh_parse_id(text, size, &id, errstr);
    char *branch = NULL;
    if (rt_gh_parse_default_branch(text, size, &branch, errstr) == RT_OK) free(branch);
    /* a pull request listing, for a fork's run and for a run without a branch */
    rt_gh_run fork = {.repository = "o/r",
                      .head_repository = "alice/r",
                      .head_branch = "fix",
                      .head_sha = "abcdef12",
                      .event = "pull_request",
                      .created_at = 1714557600};
    rt_gh_pull pull;
    for (int k = 0; k < 2; k++) {
        if (k) fork.head_branch = "";
        int rc = rt_gh_pull_for_run(text, size, &fork, &pull, errstr);
        if (rc == RT_OK &&
            (pull.number <= 0 || strlen(pull.association) >= sizeof pull.association))
            __builtin_trap();
        if (rc != RT_OK && pull.number != 0) __builtin_trap();
    }
    char *link = malloc(size + 1);
    if (link) {
        memcpy(link, data, size);
        link[size] = '\0';
        char *next = rt_gh_link_next(link);
        if (next && strncmp(next, "http://", 7) && strncmp(next, "https://", 8)) __builtin_trap();
        free(next);
        free(link);
    }
    return 0;
}
