/* SPDX-License-Identifier: MPL-2.0 */
/* github.h - GitHub REST answers (workflow runs, run attempts, artifacts, issues,
 * comments, the repository) parsed into validated structs, the Link header, and the small
 * decisions collect-github makes about them. Pure: no I/O, no clock (times are passed in).
 *
 * Untrusted input: every answer is parsed here once (jansson), every string is bounded
 * (RT_GH_MAX_TEXT bytes, no NUL), names and SHAs are checked for shape. A page that is not
 * the expected object is RT_EPROTO; a single item of a list that fails a check is skipped
 * and counted (`skipped`), so one odd run does not hide the others.
 *
 * Re-runs: the runs listing shows each run once, at its latest attempt; earlier attempts
 * come from /actions/runs/{id}/attempts/{n}. Artifacts are listed per run, not per attempt:
 * rt_gh_artifact_attempt gives an artifact to the latest attempt that had started when it
 * was created. Thread-safe (no shared state). */
#ifndef RETRIG_COMMON_GITHUB_H
#define RETRIG_COMMON_GITHUB_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/core/errors.h"

#define RT_GH_MAX_TEXT       4096 /* bytes of any string kept */
#define RT_GH_MAX_ITEMS      1000 /* items of one page */
#define RT_GH_MAX_ATTEMPTS   100  /* run attempts followed */
#define RT_GH_MAX_LINK       8192 /* bytes of a Link header */
#define RT_GH_BODY_HEAD_SIZE 200  /* bytes kept of an issue body's first line */

typedef struct rt_gh_run {
    long long id;
    int attempt; /* run_attempt, >= 1 */
    long long workflow_id;
    char *workflow_path; /* may be NULL */
    char *name;          /* may be NULL */
    char *event;
    char *status;      /* queued, in_progress, completed, ... */
    char *conclusion;  /* may be NULL (not completed) */
    char *head_branch; /* "" when GitHub sent null (see rt_gh_branch_key) */
    char *head_sha;
    char *repository;      /* OWNER/NAME of the run's repository */
    char *head_repository; /* OWNER/NAME of the head branch's repository; may be NULL */
    int pr;                /* first pull request number in pull_requests, 0 when none */
    char *html_url;        /* may be NULL */
    time_t created_at;
    time_t run_started_at; /* this attempt's start; created_at when absent */
} rt_gh_run;

typedef struct rt_gh_runs {
    rt_gh_run *items;
    size_t count;
    size_t skipped; /* items that failed a check */
    long long total_count;
} rt_gh_runs;

typedef struct rt_gh_artifact {
    long long id;
    char *name;
    long long size_in_bytes;
    bool expired;
    time_t created_at;
    long long run_id; /* workflow_run.id, 0 when absent */
} rt_gh_artifact;

typedef struct rt_gh_artifacts {
    rt_gh_artifact *items;
    size_t count;
    size_t skipped;
    long long total_count;
} rt_gh_artifacts;

typedef struct rt_gh_issue {
    long long number;
    char *html_url;
    char *state;                          /* open, closed */
    char body_head[RT_GH_BODY_HEAD_SIZE]; /* the body's first line, cut; "" when none */
    bool pull_request;                    /* the issues listing also lists pull requests */
} rt_gh_issue;

typedef struct rt_gh_issues {
    rt_gh_issue *items;
    size_t count;
    size_t skipped;
} rt_gh_issues;

/* "2024-05-01T10:00:00Z" (or with a +hh:mm / -hh:mm offset, fractions ignored) -> time_t.
 * RT_EINVAL when it is not that shape or not a real date. */
RT_MUSTCHECK int rt_gh_parse_time(const char *text, time_t *out);

/* GET /repos/{o}/{r}/actions/runs (and /actions/workflows/{f}/runs): {"total_count",
 * "workflow_runs": [...]}. */
RT_MUSTCHECK int rt_gh_parse_runs(const char *json, size_t len, rt_gh_runs *out, char *errstr);
/* GET /repos/{o}/{r}/actions/runs/{id}/attempts/{n}: one run object. */
RT_MUSTCHECK int rt_gh_parse_run(const char *json, size_t len, rt_gh_run *out, char *errstr);
void rt_gh_run_free(rt_gh_run *run);
void rt_gh_runs_free(rt_gh_runs *runs);

/* GET /repos/{o}/{r}/actions/runs/{id}/artifacts: {"total_count", "artifacts": [...]}. */
RT_MUSTCHECK int rt_gh_parse_artifacts(const char *json, size_t len, rt_gh_artifacts *out,
                                       char *errstr);
void rt_gh_artifacts_free(rt_gh_artifacts *artifacts);

/* GET /repos/{o}/{r}/issues: a JSON array of issues (pull requests flagged). */
RT_MUSTCHECK int rt_gh_parse_issues(const char *json, size_t len, rt_gh_issues *out, char *errstr);
/* POST/PATCH /repos/{o}/{r}/issues[/{n}]: one issue. */
RT_MUSTCHECK int rt_gh_parse_issue(const char *json, size_t len, rt_gh_issue *out, char *errstr);
void rt_gh_issue_free(rt_gh_issue *issue);
void rt_gh_issues_free(rt_gh_issues *issues);

/* GET /repos/{o}/{r}/issues/{n}/comments: a JSON array of comments, each its id and the
 * first line of its body (in body_head). */
typedef struct rt_gh_comment {
    long long id;
    char body_head[RT_GH_BODY_HEAD_SIZE];
} rt_gh_comment;
typedef struct rt_gh_comments {
    rt_gh_comment *items;
    size_t count;
    size_t skipped;
} rt_gh_comments;
RT_MUSTCHECK int rt_gh_parse_comments(const char *json, size_t len, rt_gh_comments *out,
                                      char *errstr);
void rt_gh_comments_free(rt_gh_comments *comments);

/* An answer's "id" (a created comment, a Bugzilla bug): a positive integer. */
RT_MUSTCHECK int rt_gh_parse_id(const char *json, size_t len, long long *id, char *errstr);

/* GET /repos/{o}/{r}: its default_branch (malloc'd). */
RT_MUSTCHECK int rt_gh_parse_default_branch(const char *json, size_t len, char **branch,
                                            char *errstr);

/* The URL of rel="next" in a Link header (malloc'd), NULL when there is none (or the
 * header is malformed or longer than RT_GH_MAX_LINK). */
char *rt_gh_link_next(const char *link);

/* OWNER/NAME as GitHub spells them: letters, digits, '-', '_', '.'; neither part "." or "..". */
bool rt_gh_valid_repo(const char *s);
/* A git branch name: printable, no spaces, at most 255 bytes. */
bool rt_gh_valid_branch(const char *s);
/* A commit id: 7 to 64 hexadecimal digits. */
bool rt_gh_valid_sha(const char *s);

/* The pull request of a run GitHub lists without one (runs from forks, and runs of pull
 * requests merged since): looked up by collect-github with
 * GET /repos/{o}/{r}/pulls?head=OWNER:BRANCH&state=all (OWNER the head repository's) or, for
 * a run without a branch, GET /repos/{o}/{r}/commits/{sha}/pulls; both answer a JSON array of
 * pull requests. */
typedef struct rt_gh_pull {
    int number;
    char association[32]; /* author_association (OWNER, MEMBER, CONTRIBUTOR, ...), "" unknown */
} rt_gh_pull;
/* The pull request of `run` in such an answer: one into run->repository whose head is the
 * run's branch of run->head_repository (any head for a run without a branch): the one whose
 * head commit is the run's, else the newest created before the run (a branch may carry one
 * pull request after another), else the first listed (GitHub lists the newest first).
 * RT_OK, RT_ENOTFOUND when none matches, RT_EPROTO when the answer is not an array. */
RT_MUSTCHECK int rt_gh_pull_for_run(const char *json, size_t len, const rt_gh_run *run,
                                    rt_gh_pull *out, char *errstr);

/* The artifacts collect-github downloads by default: test reports by their usual names. */
#define RT_GH_ARTIFACT_PATTERN_DEFAULT                                                             \
    "*junit*,*test-result*,*test-report*,*surefire*,*pytest*,*.xml"

/* Whether an artifact named `name` is wanted by `pattern`: comma-separated globs (fnmatch,
 * case-insensitive); the name must match one that does not start with '!' and none that
 * does ("*,!*_cluster_dumps,!Event File" takes every artifact but those). */
bool rt_gh_artifact_wanted(const char *pattern, const char *name);

/* Whether a redirect from URL `from` may be followed to `to`: both http(s), and never from
 * https:// down to http:// (an artifact's storage URL included: a downgrade would hand the
 * signed URL and the artifact to anyone on the path). */
bool rt_gh_redirect_allowed(const char *from, const char *to);

/* What counts as one branch: "pr:<N>", "commit:<sha>" for a run whose head_branch GitHub
 * sent as null (it counts as its own commit, never as another run's branch nor main),
 * "fork:<OWNER/NAME>:<branch>" for a run of a fork's branch without a pull request number
 * (GitHub lists none for forks), else the branch. */
void rt_gh_branch_key(const rt_gh_run *run, char *out, size_t size);
/* True for a run of the repository's own default branch that is not a pull request. */
bool rt_gh_is_main(const rt_gh_run *run, const char *default_branch);
/* True for an attempt whose results say nothing (cancelled or skipped). */
bool rt_gh_run_cancelled(const rt_gh_run *run);

/* The attempt (1..n) an artifact created at `created` belongs to: the latest attempt
 * whose start (starts[0] for attempt 1, ...) is not after it; 1 when it predates them all. */
int rt_gh_artifact_attempt(time_t created, const time_t *starts, int n);

/* True when `remaining` requests (-1: unknown) are at or below the reserve: stop before
 * the limit. */
bool rt_gh_rate_exhausted(long remaining, long reserve);

#endif
