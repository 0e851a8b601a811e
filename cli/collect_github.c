/* SPDX-License-Identifier: MPL-2.0 */
/* collect_github.c - `retrig collect-github`: the test history of a GitHub-hosted project.
 * Lists the completed GitHub Actions workflow runs of a repository on every branch and pull
 * request, every attempt of each run (a re-run is a retrigger of the same commit: each
 * attempt is kept), downloads the artifacts whose name matches --artifact-pattern, reads
 * the JUnit XML files inside (common/io/artifact_zip, common/core/junit) and stores every outcome
 * (common/history, source github; migrations/0016_github.sql).
 *
 * One transaction per run attempt: its outcomes, the gaps found (no JUnit artifact,
 * unparsable file, cancelled, expired artifact, over a cap) and its github_runs row, which
 * makes the attempt known. A collector killed mid-way loses only the attempt in hand and
 * the next one redoes it; attempts already known cost no request. The run listing starts a
 * few days before the newest run stored (re-runs of recent runs are found), or --since
 * ago; a first page answered 304 to its stored ETag means nothing changed. A run GitHub
 * lists without a pull request (from a fork, or of a pull request merged since) and every
 * run from a fork gets its pull request looked up (find_pull: by head owner and branch, by
 * commit without a branch; once per head repository and branch per pass), so a fork's pull
 * request counts as pr:<N> and its author's association is stored.
 *
 * Rate limits (common/io/github_client.h): the command stops before the limit with a message
 * naming the reset, and a later invocation resumes; with --interval it waits for the reset
 * instead. Single-threaded; SIGTERM/SIGINT stop after the attempt in hand. */
#include <ctype.h>
#include <fnmatch.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/core/github.h"
#include "common/core/history.h"
#include "common/core/junit.h"
#include "common/io/artifact_zip.h"
#include "common/io/github_client.h"
#include "common/io/history_store.h"
#include "common/io/http.h"
#include "common/io/pg.h"
#include "common/io/stop.h"
#include "common/store/github.h"

#define MAX_WORKFLOWS       8
#define RERUN_LOOKBACK_DAYS 3 /* the listing starts this long before the newest run stored */
#define DEFAULT_SINCE_DAYS  7
#define ZIP_MAX_ENTRIES     10000
#define ZIP_MAX_FILE_BYTES  (64L * 1024 * 1024)
#define ZIP_MAX_TOTAL_BYTES (256L * 1024 * 1024)
#define JUNIT_FILE_GLOB     "*.xml"

/* A JUnit file read from an artifact. */
typedef struct junit_file {
    char *artifact;
    char *name;
    rt_history_rows rows;
} junit_file;

typedef struct gap {
    const char *kind;
    char *artifact, *file, *detail;
} gap;

/* Everything about the attempt in hand, stored in one transaction. */
typedef struct attempt_data {
    junit_file *files;
    size_t nfiles, cap_files;
    gap *gaps;
    size_t ngaps, cap_gaps;
    int artifacts, expired;
    const char *artifact_in_hand;
} attempt_data;

typedef struct collector {
    rt_config *cfg;
    rt_pg *pg;
    rt_gh_client *gh;
    const char *repo;
    const char *workflow; /* "*" or a file */
    const char *artifact_pattern;
    char *default_branch;
    bool progress;
    /* the pull requests looked up this pass, per head repository and branch */
    struct pull_seen *pulls;
    size_t npulls, cap_pulls;
    /* totals of this invocation */
    long runs_listed, attempts_stored, attempts_known, artifacts, expired, files, outcomes, gaps,
        pages_unchanged, prs_found;
} collector;

/* The pull requests listed for a head repository and branch (the commit for a run without
 * a branch); each run picks its own among them (rt_gh_pull_for_run). */
typedef struct pull_seen {
    char *head_repo, *branch;
    char *listing; /* the answer, NULL when the look-up failed */
    size_t len;
} pull_seen;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig collect-github --repo OWNER/NAME [--workflow FILE]... [--since 7d]\n"
            "                             [--artifact-pattern GLOBS] [--token-file F]\n"
            "                             [--max-requests N] [--interval 1h]\n"
            "Stores the JUnit results of the completed GitHub Actions runs of OWNER/NAME, on\n"
            "every branch and pull request and every re-run attempt, in the test history\n"
            "(retrig flakes --project OWNER/NAME). Runs are listed from --since ago (default: a\n"
            "few days before the newest run stored, else 7 days); artifacts whose name matches\n"
            "--artifact-pattern are downloaded and their *.xml files read: comma-separated\n"
            "globs, case-insensitive, '!' excluding (default\n"
            "  " RT_GH_ARTIFACT_PATTERN_DEFAULT ";\n"
            "dask: '*,!*_cluster_dumps,!Event File').\n"
            "The token (actions: read) comes from --token-file, else github_token or\n"
            "github_token_file. It stops before the rate limit (github_rate_limit_reserve\n"
            "requests left) or after --max-requests API requests, saying when to run again;\n"
            "--interval runs a pass every interval and waits for rate limit resets instead.\n"
            "Exit: 0 done (or stopped at a limit), 1 failure, 2 usage.\n");
}

static void attempt_data_free(attempt_data *d)
{
    for (size_t i = 0; i < d->nfiles; i++) {
        free(d->files[i].artifact);
        free(d->files[i].name);
        rt_history_rows_free(&d->files[i].rows);
    }
    for (size_t i = 0; i < d->ngaps; i++) {
        free(d->gaps[i].artifact);
        free(d->gaps[i].file);
        free(d->gaps[i].detail);
    }
    free(d->files);
    free(d->gaps);
    memset(d, 0, sizeof *d);
}

static int add_gap(attempt_data *d, const char *kind, const char *artifact, const char *file,
                   const char *detail)
{
    if (d->ngaps == d->cap_gaps) {
        size_t cap = d->cap_gaps ? d->cap_gaps * 2 : 8;
        gap *grown = realloc(d->gaps, cap * sizeof *grown);
        if (!grown) return RT_ENOMEM;
        d->gaps = grown;
        d->cap_gaps = cap;
    }
    gap *g = &d->gaps[d->ngaps];
    g->kind = kind;
    g->artifact = strdup(artifact ? artifact : "");
    g->file = strdup(file ? file : "");
    g->detail = detail ? strndup(detail, 500) : NULL;
    if (!g->artifact || !g->file || (detail && !g->detail)) {
        free(g->artifact);
        free(g->file);
        free(g->detail);
        return RT_ENOMEM;
    }
    d->ngaps++;
    return RT_OK;
}

/* One file of an artifact's zip: a JUnit file becomes rows, anything else a gap. */
static int on_zip_file(void *ctx, const char *name, const char *data, size_t len, int rc)
{
    attempt_data *d = ctx;
    const char *artifact = d->artifact_in_hand;
    if (rc == RT_ETOOBIG) return add_gap(d, "too-big", artifact, name, "file over the size cap");
    if (rc != RT_OK) return add_gap(d, "unparsable-file", artifact, name, "cannot decompress");
    rt_history_rows rows = {0};
    rt_junit_stats stats = {0};
    char errstr[RT_ERRSTR_SIZE] = "";
    rc = rt_junit_add(data, len, &rows, &stats, errstr);
    if (rc == RT_ENOMEM) {
        rt_history_rows_free(&rows);
        return rc;
    }
    if (rc != RT_OK) {
        rt_history_rows_free(&rows);
        return add_gap(d, rc == RT_ETOOBIG ? "too-big" : "unparsable-file", artifact, name, errstr);
    }
    if (stats.set_aside > 0) { /* malformed testcases: a gap of this file, its other tests kept */
        char detail[300];
        snprintf(detail, sizeof detail, "%zu of %zu testcases set aside, the rest stored: %s",
                 stats.set_aside, stats.testcases, stats.aside[0]);
        rc = add_gap(d, "unparsable-file", artifact, name, detail);
        if (rc != RT_OK) {
            rt_history_rows_free(&rows);
            return rc;
        }
    }
    if (d->nfiles == d->cap_files) {
        size_t cap = d->cap_files ? d->cap_files * 2 : 8;
        junit_file *grown = realloc(d->files, cap * sizeof *grown);
        if (!grown) {
            rt_history_rows_free(&rows);
            return RT_ENOMEM;
        }
        d->files = grown;
        d->cap_files = cap;
    }
    junit_file *f = &d->files[d->nfiles];
    f->artifact = strdup(artifact);
    f->name = strdup(name);
    f->rows = rows;
    if (!f->artifact || !f->name) {
        free(f->artifact);
        free(f->name);
        rt_history_rows_free(&f->rows);
        return RT_ENOMEM;
    }
    d->nfiles++;
    return RT_OK;
}

static void iso_time(time_t t, char *out, size_t size)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void show_progress(collector *c, bool last)
{
    if (!c->progress) return;
    fprintf(stderr,
            "\r%s: %ld runs listed, %ld attempts stored, %ld artifacts, %ld outcomes, %ld "
            "requests, %ld left   %s",
            c->repo, c->runs_listed, c->attempts_stored, c->artifacts, c->outcomes,
            rt_gh_client_requests(c->gh), rt_gh_client_rate_remaining(c->gh), last ? "\n" : "");
    fflush(stderr);
}

/* Stores one attempt and all it found in one transaction, as the pull request `pull` when
 * one was looked up (number 0: as listed). Long because the 22 parameters of its
 * github_runs row are formatted and listed one per line, then the same transaction writes each
 * JUnit file's outcomes, each gap and the collection state, with one rollback for any failure. */
static int store_attempt(collector *c, const rt_gh_run *listed, const rt_gh_pull *pull,
                         attempt_data *d)
{
    rt_gh_run found = *listed; /* the pull request looked up, when GitHub listed none */
    if (pull->number) found.pr = pull->number;
    const rt_gh_run *run = &found;
    char run_id[24], attempt[16], workflow_id[24], pr[16], created[24], started[24],
        branch_key[600];
    char artifacts[16], expired[16], files[24], outcomes[24], run_at[32];
    long nout = 0;
    for (size_t i = 0; i < d->nfiles; i++) nout += (long)d->files[i].rows.ntests;
    snprintf(run_id, sizeof run_id, "%lld", run->id);
    snprintf(attempt, sizeof attempt, "%d", run->attempt);
    snprintf(workflow_id, sizeof workflow_id, "%lld", run->workflow_id);
    snprintf(pr, sizeof pr, "%d", run->pr);
    snprintf(created, sizeof created, "%lld", (long long)run->created_at);
    snprintf(started, sizeof started, "%lld", (long long)run->run_started_at);
    snprintf(artifacts, sizeof artifacts, "%d", d->artifacts);
    snprintf(expired, sizeof expired, "%d", d->expired);
    snprintf(files, sizeof files, "%zu", d->nfiles);
    snprintf(outcomes, sizeof outcomes, "%ld", nout);
    iso_time(run->run_started_at, run_at, sizeof run_at);
    rt_gh_branch_key(run, branch_key, sizeof branch_key);
    bool main_branch = rt_gh_is_main(run, c->default_branch);

    int rc = rt_pg_begin(c->pg);
    if (rc != RT_OK) return rc;
    rt_gh_run_row row = {.repository = c->repo,
                         .run_id = run_id,
                         .attempt = attempt,
                         .workflow_id = run->workflow_id ? workflow_id : NULL,
                         .workflow_path = run->workflow_path,
                         .workflow_name = run->name,
                         .event = run->event,
                         .conclusion = run->conclusion,
                         .head_branch = run->head_branch,
                         .head_sha = run->head_sha,
                         .head_repository = run->head_repository,
                         .pr = run->pr > 0 ? pr : NULL,
                         .branch_key = branch_key,
                         .main = main_branch,
                         .html_url = run->html_url,
                         .created_at = created,
                         .run_started_at = started,
                         .artifacts = artifacts,
                         .expired_artifacts = expired,
                         .junit_files = files,
                         .outcomes = outcomes,
                         .author_association = pull->association[0] ? pull->association : NULL};
    bool fresh = false;
    rc = rt_gh_store_run(c->pg, &row, &fresh);
    if (rc == RT_OK && !fresh) { /* another collector stored it meanwhile */
        rc = rt_pg_rollback(c->pg);
        c->attempts_known++;
        return rc;
    }
    for (size_t i = 0; rc == RT_OK && i < d->nfiles; i++) {
        junit_file *f = &d->files[i];
        size_t size = strlen(f->artifact) + strlen(f->name) + 64;
        char *run_key = malloc(size);
        if (!run_key) {
            rc = RT_ENOMEM;
            break;
        }
        snprintf(run_key, size, "%lld/%d/%s/%s", run->id, run->attempt, f->artifact, f->name);
        rt_history_run hr = {.source = "github",
                             .run_key = run_key,
                             .repository = c->repo,
                             .project = c->repo,
                             .branch = run->head_branch,
                             .main = main_branch,
                             .branch_key = branch_key,
                             .pr = run->pr,
                             .push = run->head_sha,
                             .revision = run->head_sha,
                             .platform = f->artifact,
                             .label = run->workflow_path ? run->workflow_path : run->name,
                             .run_at = run_at,
                             .complete_results = true};
        bool inserted = false;
        rc = rt_history_store(c->pg, &hr, &f->rows, false, &inserted);
        if (rc == RT_OK) {
            rc = rt_gh_store_file(c->pg, c->repo, run_key, run_id, attempt, f->artifact, f->name);
        }
        free(run_key);
    }
    for (size_t i = 0; rc == RT_OK && i < d->ngaps; i++) {
        rc = rt_gh_store_gap(c->pg, c->repo, run_id, attempt, d->gaps[i].kind, d->gaps[i].artifact,
                             d->gaps[i].file, d->gaps[i].detail);
    }
    if (rc == RT_OK) rc = rt_gh_store_run_counted(c->pg, c->repo, c->workflow, run_id, created);
    if (rc == RT_OK) rc = rt_pg_commit(c->pg);
    if (rc != RT_OK) {
        rt_log_error("cannot store a run attempt", "run_id", run_id, "attempt", attempt, "error",
                     rt_pg_errstr(c->pg));
        if (rt_pg_in_transaction(c->pg)) {
            int ignored = rt_pg_rollback(c->pg);
            (void)ignored;
        }
        return rc;
    }
    /* the attempt's runs into the per-day rollup (left queued for the next call if this fails) */
    if (rt_history_rollup(c->pg, 5000, NULL) != RT_OK)
        rt_log_warn("run attempt stored but not yet in the rollup; the next attempt adds it",
                    "run_id", run_id, "error", rt_pg_errstr(c->pg));
    c->attempts_stored++;
    c->files += (long)d->nfiles;
    c->outcomes += nout;
    c->gaps += (long)d->ngaps;
    return RT_OK;
}

/* Downloads and reads the artifacts of one attempt, then stores it. RT_ERETRY when the
 * client stopped (nothing stored for the attempt). */
static int collect_attempt(collector *c, const rt_gh_run *run, const rt_gh_pull *pull,
                           const rt_gh_artifacts *artifacts, const time_t *starts, int nstarts)
{
    attempt_data d = {0};
    int rc = RT_OK;
    bool cancelled = rt_gh_run_cancelled(run);
    if (cancelled) rc = add_gap(&d, "cancelled", NULL, NULL, run->conclusion);
    for (size_t i = 0; rc == RT_OK && !cancelled && i < artifacts->count; i++) {
        const rt_gh_artifact *a = &artifacts->items[i];
        if (rt_gh_artifact_attempt(a->created_at, starts, nstarts) != run->attempt) continue;
        if (!rt_gh_artifact_wanted(c->artifact_pattern, a->name)) continue;
        d.artifacts++;
        c->artifacts++;
        if (a->expired) {
            d.expired++;
            c->expired++;
            rc = add_gap(&d, "expired-artifact", a->name, NULL,
                         "deleted by GitHub before it was read");
            continue;
        }
        if (a->size_in_bytes > c->cfg->http_max_body_bytes) {
            rc = add_gap(&d, "too-big", a->name, NULL, "artifact over http_max_body_bytes");
            continue;
        }
        char path[512];
        snprintf(path, sizeof path, "/repos/%s/actions/artifacts/%lld/zip", c->repo, a->id);
        rt_gh_response resp;
        int got = rt_gh_download(c->gh, path, c->cfg->http_max_body_bytes, &resp);
        if (got == RT_ERETRY && rt_gh_client_stopped(c->gh)) {
            rt_gh_response_free(&resp);
            rc = RT_ERETRY;
            break;
        }
        if (got != RT_OK) {
            rc = add_gap(&d, got == RT_ETOOBIG ? "too-big" : "download-failed", a->name, NULL,
                         rt_gh_client_errstr(c->gh));
            rt_gh_response_free(&resp);
            continue;
        }
        rt_zip_limits limits = {ZIP_MAX_ENTRIES, ZIP_MAX_FILE_BYTES, ZIP_MAX_TOTAL_BYTES};
        rt_zip_stats stats;
        char errstr[RT_ERRSTR_SIZE] = "";
        d.artifact_in_hand = a->name;
        int zrc = rt_zip_each(resp.body, resp.len, &limits, JUNIT_FILE_GLOB, on_zip_file, &d,
                              &stats, errstr);
        rt_gh_response_free(&resp);
        if (zrc == RT_ENOMEM) {
            rc = zrc;
        } else if (zrc == RT_ETOOBIG) {
            rc = add_gap(&d, "too-big", a->name, NULL, errstr);
        } else if (zrc != RT_OK) {
            rc = add_gap(&d, "unparsable-file", a->name, NULL, errstr);
        }
    }
    if (rc == RT_OK && !cancelled && d.nfiles == 0) {
        bool other = false; /* an artifact gap says more than "no JUnit artifact" */
        for (size_t i = 0; i < d.ngaps; i++)
            other = other || strcmp(d.gaps[i].kind, "too-big") == 0;
        if (!other)
            rc = add_gap(&d, "no-junit-artifact", NULL, NULL,
                         d.artifacts ? "no JUnit XML file in the matching artifacts"
                                     : "no artifact matches --artifact-pattern");
    }
    if (rc == RT_OK) rc = store_attempt(c, run, pull, &d);
    attempt_data_free(&d);
    show_progress(c, false);
    return rc;
}

/* Every page of a run's artifacts. */
static int list_artifacts(collector *c, long long run_id, rt_gh_artifacts *out)
{
    memset(out, 0, sizeof *out);
    char first[512];
    snprintf(first, sizeof first, "/repos/%s/actions/runs/%lld/artifacts?per_page=100", c->repo,
             run_id);
    char *url = strdup(first);
    int rc = url ? RT_OK : RT_ENOMEM;
    for (int page = 0; rc == RT_OK && url && page < 50; page++) {
        rt_gh_response resp;
        rc = rt_gh_request(c->gh, "GET", url, NULL, NULL, &resp);
        free(url);
        url = NULL;
        rt_gh_artifacts part;
        char errstr[RT_ERRSTR_SIZE] = "";
        if (rc == RT_OK) rc = rt_gh_parse_artifacts(resp.body, resp.len, &part, errstr);
        if (rc == RT_EPROTO) rt_log_error("bad artifact list", "error", errstr);
        if (rc == RT_OK) {
            rt_gh_artifact *grown =
                realloc(out->items, (out->count + part.count + 1) * sizeof *grown);
            if (!grown) {
                rt_gh_artifacts_free(&part);
                rc = RT_ENOMEM;
            } else {
                out->items = grown;
                if (part.count)
                    memcpy(out->items + out->count, part.items, part.count * sizeof *grown);
                out->count += part.count;
                out->skipped += part.skipped;
                free(part.items);
                url = rt_gh_link_next(resp.link);
            }
        }
        rt_gh_response_free(&resp);
    }
    free(url);
    if (rc != RT_OK) rt_gh_artifacts_free(out);
    return rc;
}

/* The attempts 1..n of the run stored before: known[a - 1], and starts[a - 1] their starts. */
static int stored_attempts(collector *c, const char *run_id, int n, bool *known, time_t *starts)
{
    int rc = rt_gh_store_attempts(c->pg, c->repo, atoll(run_id), n, known, starts);
    if (rc != RT_OK) rt_log_error("cannot read stored attempts", "error", rt_pg_errstr(c->pg));
    return rc;
}

/* s percent-encoded for a query string into out (RFC 3986 unreserved characters kept). */
static void query_escape(const char *s, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 4 < size; p++) {
        if (isalnum(*p) || strchr("-._~", *p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
}

/* The pull request of a run GitHub lists without one (or from a fork, whose author's
 * association decides whether it counts toward a flaky-test issue): the pull requests of its
 * head repository and branch are listed once per pass (GET /pulls?head=OWNER:BRANCH&state=all:
 * merged and closed ones too; by commit for a run without a branch) and each run picks its
 * own. out->number 0 when there is none or the look-up failed (the run is then stored as
 * listed); RT_ERETRY when the client stopped (the attempt is left for the next pass). */
static int find_pull(collector *c, const rt_gh_run *run, rt_gh_pull *out)
{
    memset(out, 0, sizeof *out);
    bool fork = run->head_repository && strcasecmp(run->head_repository, c->repo) != 0;
    bool pr_event = !strncmp(run->event, "pull_request", 12);
    if (!fork && !(pr_event && run->pr == 0)) return RT_OK;
    const char *head_repo = run->head_repository ? run->head_repository : c->repo;
    const char *branch = run->head_branch[0] ? run->head_branch : run->head_sha;
    pull_seen *seen = NULL;
    for (size_t i = 0; i < c->npulls && !seen; i++)
        if (!strcasecmp(c->pulls[i].head_repo, head_repo) && !strcmp(c->pulls[i].branch, branch))
            seen = &c->pulls[i];
    if (!seen) {
        char path[2048], escaped[800], owner[128];
        if (run->head_branch[0]) {
            snprintf(owner, sizeof owner, "%.*s", (int)strcspn(head_repo, "/"), head_repo);
            query_escape(run->head_branch, escaped, sizeof escaped);
            snprintf(path, sizeof path, "/repos/%s/pulls?head=%s:%s&state=all&per_page=100",
                     c->repo, owner, escaped);
        } else {
            snprintf(path, sizeof path, "/repos/%s/commits/%s/pulls?per_page=100", c->repo,
                     run->head_sha);
        }
        rt_gh_response resp;
        int rc = rt_gh_request(c->gh, "GET", path, NULL, NULL, &resp);
        if (rc == RT_ERETRY && rt_gh_client_stopped(c->gh)) {
            rt_gh_response_free(&resp);
            return rc;
        }
        if (rc != RT_OK)
            rt_log_warn("cannot look up a run's pull request; stored as listed", "branch", branch,
                        "error", rt_gh_client_errstr(c->gh));
        if (c->npulls == c->cap_pulls) {
            size_t cap = c->cap_pulls ? c->cap_pulls * 2 : 16;
            pull_seen *grown = realloc(c->pulls, cap * sizeof *grown);
            if (!grown) {
                rt_gh_response_free(&resp);
                return RT_ENOMEM;
            }
            c->pulls = grown;
            c->cap_pulls = cap;
        }
        seen = &c->pulls[c->npulls];
        seen->head_repo = strdup(head_repo);
        seen->branch = strdup(branch);
        seen->listing = rc == RT_OK && resp.body ? strndup(resp.body, resp.len) : NULL;
        seen->len = seen->listing ? resp.len : 0;
        rt_gh_response_free(&resp);
        if (!seen->head_repo || !seen->branch || (rc == RT_OK && !seen->listing)) {
            free(seen->head_repo);
            free(seen->branch);
            free(seen->listing);
            return RT_ENOMEM;
        }
        c->npulls++;
    }
    if (!seen->listing) return RT_OK;
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_gh_pull_for_run(seen->listing, seen->len, run, out, errstr);
    if (rc == RT_EPROTO) rt_log_warn("bad pull request listing", "error", errstr);
    if (rc == RT_ENOMEM) return rc;
    if (out->number) c->prs_found++;
    return RT_OK;
}

static void forget_pulls(collector *c)
{
    for (size_t i = 0; i < c->npulls; i++) {
        free(c->pulls[i].head_repo);
        free(c->pulls[i].branch);
        free(c->pulls[i].listing);
    }
    free(c->pulls);
    c->pulls = NULL;
    c->npulls = c->cap_pulls = 0;
}

/* Every attempt of a listed run not stored yet. */
static int collect_run(collector *c, const rt_gh_run *run)
{
    if (strcmp(run->status, "completed") != 0) return RT_OK;
    char run_id[24];
    snprintf(run_id, sizeof run_id, "%lld", run->id);
    time_t starts[RT_GH_MAX_ATTEMPTS] = {0};
    bool known[RT_GH_MAX_ATTEMPTS] = {false};
    int n = run->attempt;
    int rc = stored_attempts(c, run_id, n, known, starts);
    if (rc != RT_OK) return rc;
    int missing = 0;
    for (int a = 1; a <= n; a++) missing += !known[a - 1];
    c->attempts_known += n - missing;
    if (!missing) return RT_OK;

    /* The earlier attempts' objects: their starts place the artifacts. */
    rt_gh_run attempts[RT_GH_MAX_ATTEMPTS];
    memset(attempts, 0, sizeof attempts);
    starts[n - 1] = run->run_started_at;
    for (int a = 1; rc == RT_OK && a < n; a++) {
        if (known[a - 1]) continue;
        char path[512];
        snprintf(path, sizeof path, "/repos/%s/actions/runs/%lld/attempts/%d", c->repo, run->id, a);
        rt_gh_response resp;
        rc = rt_gh_request(c->gh, "GET", path, NULL, NULL, &resp);
        char errstr[RT_ERRSTR_SIZE] = "";
        if (rc == RT_OK) rc = rt_gh_parse_run(resp.body, resp.len, &attempts[a - 1], errstr);
        if (rc == RT_EPROTO) rt_log_error("bad run attempt", "run_id", run_id, "error", errstr);
        if (rc == RT_OK) {
            attempts[a - 1].attempt = a;
            starts[a - 1] = attempts[a - 1].run_started_at;
        }
        rt_gh_response_free(&resp);
    }
    rt_gh_pull pull = {0};
    if (rc == RT_OK) rc = find_pull(c, run, &pull);
    rt_gh_artifacts artifacts = {0};
    if (rc == RT_OK) rc = list_artifacts(c, run->id, &artifacts);
    for (int a = 1; rc == RT_OK && a <= n && !rt_stop_requested(); a++) {
        if (known[a - 1]) continue;
        rc = collect_attempt(c, a == n ? run : &attempts[a - 1], &pull, &artifacts, starts, n);
    }
    rt_gh_artifacts_free(&artifacts);
    for (int a = 0; a < n; a++) rt_gh_run_free(&attempts[a]);
    return rc;
}

static char *etag_of(collector *c, const char *url) { return rt_gh_store_etag(c->pg, url); }

static const char *cap_text(const collector *c)
{
    static char text[16];
    snprintf(text, sizeof text, "%d", c->cfg->github_listing_cap);
    return text;
}

/* Lists the runs of one listing URL page by page and collects each. When splittable and
 * its first page says it holds github_listing_cap runs or more (GitHub serves no more),
 * nothing is collected and *capped is set. *complete: every page was read; *first_etag
 * (may be NULL) receives the first page's ETag. */
static int list_window(collector *c, const char *first, const char *etag, bool splittable,
                       bool *capped, bool *complete, char **first_etag)
{
    char *url = strdup(first);
    int rc = url ? RT_OK : RT_ENOMEM;
    for (int page = 0; rc == RT_OK && url && !rt_stop_requested(); page++) {
        rt_gh_response resp;
        rc = rt_gh_request(c->gh, "GET", url, page == 0 ? etag : NULL, NULL, &resp);
        free(url);
        url = NULL;
        if (rc == RT_OK && resp.status == 304) {
            c->pages_unchanged++;
            *complete = true;
            rt_gh_response_free(&resp);
            break;
        }
        rt_gh_runs runs;
        char errstr[RT_ERRSTR_SIZE] = "";
        if (rc == RT_OK) rc = rt_gh_parse_runs(resp.body, resp.len, &runs, errstr);
        if (rc == RT_EPROTO) rt_log_error("bad workflow run list", "error", errstr);
        if (rc == RT_OK && page == 0 && runs.total_count >= c->cfg->github_listing_cap) {
            if (splittable) {
                *capped = true;
                rt_gh_runs_free(&runs);
                rt_gh_response_free(&resp);
                break;
            }
            char total[24];
            snprintf(total, sizeof total, "%lld", runs.total_count);
            rt_log_warn("a one-second run listing window reaches GitHub's cap: runs past it are"
                        " not listed",
                        "total_count", total, "cap", cap_text(c));
        }
        if (rc == RT_OK) {
            if (page == 0 && resp.etag && first_etag) *first_etag = strdup(resp.etag);
            if (runs.skipped) {
                char n[24];
                snprintf(n, sizeof n, "%zu", runs.skipped);
                rt_log_warn("workflow runs skipped: they fail a check", "count", n);
            }
            c->runs_listed += (long)runs.count;
            for (size_t i = 0; rc == RT_OK && i < runs.count && !rt_stop_requested(); i++)
                rc = collect_run(c, &runs.items[i]);
            url = rt_gh_link_next(resp.link);
            if (rc == RT_OK && !url && !rt_stop_requested()) *complete = true;
            rt_gh_runs_free(&runs);
        }
        rt_gh_response_free(&resp);
    }
    free(url);
    return rc;
}

/* A listing whose total reaches the cap: GitHub serves at most github_listing_cap (1,000) runs
 * of a listing filtered by creation time, silently, so the window [since's day, now] is halved
 * until none reaches it, the older half first; each window is paginated as the first one was.
 * *complete: every window was listed to its end. */
static int list_split(collector *c, const char *first, time_t since, time_t now, const char *day,
                      bool *complete)
{
    struct tm tm;
    int rc;
    char *base = strndup(first, (size_t)(strstr(first, "created=") - first));
    time_t stack_from[64], stack_to[64];
    int depth = 0;
    stack_from[depth] = since - since % 86400;
    stack_to[depth++] = now + 3600;
    *complete = true;
    rt_log_warn("run listing reaches GitHub's cap: split into created windows", "cap", cap_text(c),
                "since", day);
    rc = base ? RT_OK : RT_ENOMEM;
    while (rc == RT_OK && depth > 0 && !rt_stop_requested()) {
        time_t from = stack_from[--depth], to = stack_to[depth];
        char a[32], b[32], url[1200];
        gmtime_r(&from, &tm);
        strftime(a, sizeof a, "%Y-%m-%dT%H%%3A%M%%3A%SZ", &tm);
        gmtime_r(&to, &tm);
        strftime(b, sizeof b, "%Y-%m-%dT%H%%3A%M%%3A%SZ", &tm);
        snprintf(url, sizeof url, "%screated=%s..%s", base, a, b);
        bool window_capped = false, window_complete = false;
        rc = list_window(c, url, NULL, to - from >= 2 && depth < 62, &window_capped,
                         &window_complete, NULL);
        if (rc == RT_OK && window_capped) {
            time_t mid = from + (to - from) / 2;
            rt_log_info("run listing window reaches GitHub's cap: split in two", "cap", cap_text(c),
                        "window", url + strlen(base));
            stack_from[depth] = mid + 1; /* newer half after the older one */
            stack_to[depth++] = to;
            stack_from[depth] = from;
            stack_to[depth++] = mid;
            continue;
        }
        *complete = *complete && window_complete;
    }
    if (depth > 0) *complete = false;
    free(base);
    return rc;
}

/* One pass over the run listing of a workflow ("*": all). */
static int collect_pass(collector *c, const char *since_arg)
{
    char newest_text[32];
    bool known = false;
    int rc = rt_gh_store_newest(c->pg, c->repo, c->workflow, newest_text, &known);
    time_t now = time(NULL), since = now - DEFAULT_SINCE_DAYS * 86400L, newest = 0;
    if (rc == RT_OK && known && rt_gh_parse_time(newest_text, &newest) == RT_OK)
        since = newest - RERUN_LOOKBACK_DAYS * 86400L;
    if (rc == RT_OK) rc = rt_gh_store_pass_started(c->pg, c->repo, c->workflow);
    if (rc != RT_OK) {
        rt_log_error("cannot read the collection state", "error", rt_pg_errstr(c->pg));
        return rc;
    }
    if (since_arg) {
        long n = atol(since_arg);
        char unit = since_arg[strlen(since_arg) - 1];
        since = now - n * (unit == 'h' ? 3600L : unit == 'w' ? 7 * 86400L : 86400L);
    }
    char day[16];
    struct tm tm;
    gmtime_r(&since, &tm);
    strftime(day, sizeof day, "%Y-%m-%d", &tm);
    char first[1024];
    if (!strcmp(c->workflow, "*")) {
        snprintf(first, sizeof first,
                 "/repos/%s/actions/runs?status=completed&per_page=100&created=%%3E%%3D%s", c->repo,
                 day);
    } else {
        char *wf = rt_http_url_escape(c->workflow);
        if (!wf) return RT_ENOMEM;
        snprintf(
            first, sizeof first,
            "/repos/%s/actions/workflows/%s/runs?status=completed&per_page=100&created=%%3E%%3D%s",
            c->repo, wf, day);
        free(wf);
    }
    char *full_first = NULL;
    {
        size_t size = strlen(c->cfg->github_api_url) + strlen(first) + 2;
        if (!(full_first = malloc(size))) return RT_ENOMEM;
        size_t n = strlen(c->cfg->github_api_url);
        while (n && c->cfg->github_api_url[n - 1] == '/') n--;
        snprintf(full_first, size, "%.*s%s", (int)n, c->cfg->github_api_url, first);
    }
    char *etag = etag_of(c, full_first), *first_etag = NULL;
    bool complete = false, capped = false;
    rc = list_window(c, first, etag, true, &capped, &complete, &first_etag);
    if (rc == RT_OK && capped) rc = list_split(c, first, since, now, day, &complete);
    const char *reason = rt_stop_requested() ? "signal" : NULL;
    if (!reason && rc == RT_ERETRY && rt_gh_client_stopped(c->gh))
        reason = rt_gh_client_stopped(c->gh) == RT_GH_STOP_BUDGET ? "budget" : "rate-limit";
    if (complete && first_etag && !capped) {
        if (rt_gh_store_etag_put(c->pg, full_first, first_etag) != RT_OK)
            rt_log_warn("cannot store an ETag", "error", rt_pg_errstr(c->pg));
    }
    if (complete || reason) {
        if (rt_gh_store_pass_finished(c->pg, c->repo, c->workflow, reason) != RT_OK)
            rt_log_warn("cannot store the collection state", "error", rt_pg_errstr(c->pg));
    }
    free(etag);
    free(first_etag);
    free(full_first);
    return rc;
}

static bool valid_duration(const char *s)
{
    char *end = NULL;
    long n = strtol(s, &end, 10);
    return end != s && n > 0 && n <= 100000 && end[0] && !end[1] && strchr("hdw", end[0]);
}

static long duration_seconds(const char *s)
{
    long n = atol(s);
    char unit = s[strlen(s) - 1];
    return n * (unit == 'h' ? 3600L : unit == 'w' ? 7 * 86400L : 86400L);
}

static void print_summary(collector *c, int rc)
{
    printf("%s: %ld runs listed, %ld attempts stored (%ld known before), %ld artifacts (%ld "
           "expired), %ld JUnit files, %ld outcomes, %ld gaps; %ld requests, %ld left\n",
           c->repo, c->runs_listed, c->attempts_stored, c->attempts_known, c->artifacts, c->expired,
           c->files, c->outcomes, c->gaps, rt_gh_client_requests(c->gh),
           rt_gh_client_rate_remaining(c->gh));
    if (c->prs_found)
        printf("%ld runs counted as the pull request they were looked up under (GitHub lists "
               "none for runs from forks and of merged pull requests)\n",
               c->prs_found);
    if (c->pages_unchanged) printf("run listing unchanged since the last pass (ETag)\n");
    if (rc == RT_ERETRY && rt_gh_client_stopped(c->gh)) {
        char shown[RT_ERRSTR_SIZE];
        rt_redact(rt_gh_client_errstr(c->gh), shown, sizeof shown);
        printf("stopped: %s\n", shown);
    }
    fflush(stdout);
}

/* Long because it is one case per option with its check, then a linear sequence (the GitHub
 * client, the database, the repository's default branch, the passes over each workflow, repeated
 * every --interval) that shares cleanup through goto out. */
int rt_cli_collect_github(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"repo", required_argument, NULL, 'r'},
        {"workflow", required_argument, NULL, 'w'},
        {"since", required_argument, NULL, 's'},
        {"artifact-pattern", required_argument, NULL, 'a'},
        {"token-file", required_argument, NULL, 't'},
        {"max-requests", required_argument, NULL, 'm'},
        {"interval", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *repo = NULL, *since = NULL, *pattern = RT_GH_ARTIFACT_PATTERN_DEFAULT,
               *token_file = NULL, *interval = NULL;
    const char *workflows[MAX_WORKFLOWS];
    size_t nworkflows = 0;
    long max_requests = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "r:w:s:a:t:m:i:h", options, NULL)) != -1) {
        switch (opt) {
        case 'r': repo = optarg; break;
        case 'w':
            if (nworkflows == MAX_WORKFLOWS || !*optarg || strlen(optarg) > 200 ||
                strpbrk(optarg, "/\\ ")) {
                rt_log_error("--workflow wants a workflow file name (at most 8)", "value", optarg);
                return 2;
            }
            workflows[nworkflows++] = optarg;
            break;
        case 's':
            if (!valid_duration(optarg)) {
                rt_log_error("--since wants a number and h, d or w", "value", optarg);
                return 2;
            }
            since = optarg;
            break;
        case 'a':
            if (!*optarg || strlen(optarg) > 200) {
                rt_log_error("--artifact-pattern wants a glob", "value", optarg);
                return 2;
            }
            pattern = optarg;
            break;
        case 't': token_file = optarg; break;
        case 'm': {
            char *end = NULL;
            max_requests = strtol(optarg, &end, 10);
            if (end == optarg || *end || max_requests <= 0 || max_requests > 10000000) {
                rt_log_error("--max-requests wants a positive number", "value", optarg);
                return 2;
            }
            break;
        }
        case 'i':
            if (!valid_duration(optarg)) {
                rt_log_error("--interval wants a number and h, d or w", "value", optarg);
                return 2;
            }
            interval = optarg;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!repo || optind < argc) {
        usage(stderr);
        return 2;
    }
    if (!rt_gh_valid_repo(repo)) {
        rt_log_error("--repo wants OWNER/NAME (letters, digits, '-', '_', '.')", "value", repo);
        return 2;
    }
    if (nworkflows == 0) workflows[nworkflows++] = "*";
    const char *token = cfg->github_token;
    if (token_file) {
        if (rt__cli_token_file(cfg, token_file)) return 2;
        token = cfg->github_token;
    }

    collector c = {
        .cfg = cfg, .repo = repo, .artifact_pattern = pattern, .progress = isatty(STDERR_FILENO)};
    char errstr[RT_ERRSTR_SIZE] = "";
    int status = 1, rc = RT_OK;
    rt_gh_client_options go = {.api_url = cfg->github_api_url,
                               .token = token,
                               .max_requests = max_requests,
                               .reserve = cfg->github_rate_limit_reserve,
                               .wait_for_reset = interval != NULL,
                               .connect_timeout_ms = cfg->http_connect_timeout_ms,
                               .timeout_ms = cfg->http_timeout_ms,
                               .secondary_wait_s = cfg->github_secondary_wait_s,
                               .ca_file = cfg->http_ca_file,
                               .cancel = NULL};
    if (rt_gh_client_new(&c.gh, &go, errstr) != RT_OK) {
        rt_log_error("cannot create the GitHub client", "error", errstr);
        return 2;
    }
    if (rt__cli_connect(cfg, "cli", &c.pg) != 0) goto out;
    /* SIGTERM/SIGINT: the attempt in hand is finished, every wait ends at once. */
    rt_stop_install(cfg->drain_timeout_ms);
    signal(SIGPIPE, SIG_IGN);

    char path[300];
    snprintf(path, sizeof path, "/repos/%s", repo);
    rt_gh_response resp;
    rc = rt_gh_request(c.gh, "GET", path, NULL, NULL, &resp);
    if (rc == RT_OK)
        rc = rt_gh_parse_default_branch(resp.body, resp.len, &c.default_branch, errstr);
    rt_gh_response_free(&resp);
    if (rc != RT_OK) {
        rt_log_error("cannot read the repository", "repo", repo, "error",
                     rc == RT_EPROTO ? errstr : rt_gh_client_errstr(c.gh));
        if (rc == RT_ERETRY && rt_gh_client_stopped(c.gh)) {
            print_summary(&c, rc);
            status = 0;
        }
        goto out;
    }
    for (;;) {
        rc = RT_OK;
        for (size_t i = 0; rc == RT_OK && i < nworkflows && !rt_stop_requested(); i++) {
            c.workflow = workflows[i];
            rc = collect_pass(&c, since);
        }
        show_progress(&c, true);
        print_summary(&c, rc);
        if (rc != RT_OK && !(rc == RT_ERETRY && rt_gh_client_stopped(c.gh))) {
            rt_log_error("collection failed", "repo", repo, "error",
                         rt_gh_client_errstr(c.gh)[0] ? rt_gh_client_errstr(c.gh)
                                                      : rt_strerror(rc));
            if (!interval) goto out;
        } else if (rc == RT_ERETRY) {
            rt_log_warn("collection stopped at a limit; run again to resume", "repo", repo,
                        "reason", rt_gh_client_errstr(c.gh));
        }
        if (!interval || rt_stop_requested()) break;
        /* periodic: wait for the next pass (a signal ends the wait) */
        (void)rt_stop_sleep_ms(duration_seconds(interval) * 1000);
        if (rt_stop_requested()) break;
        c.runs_listed = c.attempts_stored = c.attempts_known = c.artifacts = c.expired = 0;
        c.files = c.outcomes = c.gaps = c.pages_unchanged = c.prs_found = 0;
        forget_pulls(&c);                 /* a new pass looks pull requests up again */
        if (rt_gh_client_stopped(c.gh)) { /* a budget ends the periodic mode too */
            break;
        }
    }
    status = 0;
out:
    forget_pulls(&c);
    free(c.default_branch);
    rt_pg_free(c.pg);
    rt_gh_client_free(c.gh);
    return status;
}
