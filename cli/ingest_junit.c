/* SPDX-License-Identifier: MPL-2.0 */
/* ingest_junit.c - `retrig ingest-junit`: records the JUnit XML reports of one CI run
 * outside Taskcluster (a GitHub Actions project such as dask/distributed) in the test
 * history. Every file is read and checked first; then one transaction writes the run and
 * all its results, so an invalid or truncated file writes nothing. Ingesting the same run
 * again changes nothing (a failure still wins over a pass of the same test). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/core/github.h"
#include "common/core/history.h"
#include "common/core/junit.h"
#include "common/io/hashkey.h"
#include "common/io/history_store.h"
#include "common/io/pg.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig ingest-junit --project OWNER/REPO --branch NAME [--pr N] [--main]\n"
            "                           --run-id ID --revision SHA [--time ISO-8601] FILE...\n"
            "Records the JUnit XML reports of one CI run in the test history (one transaction;\n"
            "an invalid file writes nothing). --main makes the branch class main; --time\n"
            "defaults to the first testsuite's timestamp (UTC when it has no offset).\n"
            "Exit: 0 recorded, 1 invalid file or database error, 2 usage.\n");
}

static bool name_char(int c) { return isalnum(c) || c == '-' || c == '_' || c == '.'; }

static bool valid_run_id(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > 100) return false;
    for (const char *p = s; *p; p++)
        if (!name_char((unsigned char)*p)) return false;
    return true;
}

/* An ISO-8601 date-time (checked loosely here, exactly by Postgres); one without an
 * offset is taken as UTC. */
static bool time_text(const char *in, char *out, size_t size)
{
    size_t n = strlen(in);
    if (n < 10 || n > 40 || !isdigit((unsigned char)in[0])) return false;
    for (const char *p = in; *p; p++)
        if (!isdigit((unsigned char)*p) && !strchr("-:T .+Z", *p)) return false;
    const char *t = strpbrk(in, "T ");
    bool zoned = t && (strchr(t, 'Z') || strchr(t, '+') || strchr(t, '-'));
    snprintf(out, size, "%s%s", in, zoned ? "" : "+00:00");
    return true;
}

/* Long because it is one case per option, one check per option with its own message, then a
 * linear sequence (read and check every file, one transaction for the run, the rollup, the
 * summary) that shares cleanup through goto out. */
int rt_cli_ingest_junit(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"project", required_argument, NULL, 'p'},
        {"branch", required_argument, NULL, 'b'},
        {"pr", required_argument, NULL, 'P'},
        {"main", no_argument, NULL, 'm'},
        {"run-id", required_argument, NULL, 'r'},
        {"revision", required_argument, NULL, 'R'},
        {"time", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *project = NULL, *branch = NULL, *run_id = NULL, *revision = NULL, *time_arg = NULL;
    int pr = 0;
    bool main_branch = false;
    int c;
    while ((c = getopt_long(argc, argv, "p:b:P:mr:R:t:h", options, NULL)) != -1) {
        switch (c) {
        case 'p': project = optarg; break;
        case 'b': branch = optarg; break;
        case 'P': {
            char *end = NULL;
            long n = strtol(optarg, &end, 10);
            if (end == optarg || *end || n <= 0 || n > 1000000000) {
                rt_log_error("--pr wants a positive pull request number", "value", optarg);
                return 2;
            }
            pr = (int)n;
            break;
        }
        case 'm': main_branch = true; break;
        case 'r': run_id = optarg; break;
        case 'R': revision = optarg; break;
        case 't': time_arg = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!project || !branch || !run_id || !revision || optind >= argc) {
        usage(stderr);
        return 2;
    }
    if (!rt_gh_valid_repo(project)) {
        rt_log_error("--project wants OWNER/REPO (letters, digits, '-', '_', '.')", "value",
                     project);
        return 2;
    }
    if (!rt_gh_valid_branch(branch)) {
        rt_log_error(
            "--branch wants a branch name (no spaces or control characters, at most 255 bytes)");
        return 2;
    }
    if (!valid_run_id(run_id)) {
        rt_log_error("--run-id wants letters, digits, '-', '_' or '.' (at most 100)", "value",
                     run_id);
        return 2;
    }
    if (!rt_gh_valid_sha(revision)) {
        rt_log_error("--revision wants a commit SHA (7 to 64 hex digits)", "value", revision);
        return 2;
    }
    char run_at[64] = "";
    if (time_arg && !time_text(time_arg, run_at, sizeof run_at)) {
        rt_log_error("--time wants an ISO-8601 date-time", "value", time_arg);
        return 2;
    }

    int status = 1;
    rt_history_rows rows = {.hash_key = *rt_hash_key()}; /* names come from the files */
    rt_junit_stats stats = {0};
    rt_pg *pg = NULL;
    char errstr[RT_ERRSTR_SIZE] = "";
    for (int i = optind; i < argc; i++) {
        size_t len = 0;
        char *data = rt__cli_read_file(argv[i], (size_t)RT_JUNIT_MAX_BYTES, &len, "the JUnit file");
        if (!data) goto out;
        int rc = rt_junit_add(data, len, &rows, &stats, errstr);
        free(data);
        if (rc != RT_OK) {
            rt_log_error("invalid JUnit file; nothing was recorded", "file", argv[i], "error",
                         rc == RT_ENOMEM ? "out of memory" : errstr);
            goto out;
        }
    }
    if (!run_at[0] && (!stats.timestamp[0] || !time_text(stats.timestamp, run_at, sizeof run_at))) {
        rt_log_error("no --time and no usable testsuite timestamp; nothing was recorded");
        goto out;
    }

    char branch_key[300];
    if (pr)
        snprintf(branch_key, sizeof branch_key, "pr:%d", pr);
    else
        snprintf(branch_key, sizeof branch_key, "%s", branch);
    rt_history_run run = {
        .source = "junit",
        .run_key = run_id,
        .repository = project,
        .project = project,
        .branch = branch,
        .main = main_branch,
        .branch_key = branch_key,
        .pr = pr,
        .push = revision,
        .revision = revision,
        .run_at = run_at,
        .complete_results = true,
    };
    if (rt__cli_connect(cfg, "cli", &pg) != 0) goto out;
    bool inserted = false;
    int rc = rt_pg_begin(pg);
    if (rc == RT_OK) rc = rt_history_store(pg, &run, &rows, true, &inserted);
    if (rc == RT_OK) rc = rt_pg_commit(pg);
    if (rc != RT_OK) {
        rt__cli_db_error(pg, "cannot record the run; nothing was recorded");
        if (rt_pg_in_transaction(pg)) {
            int ignored = rt_pg_rollback(pg);
            (void)ignored;
        }
        goto out;
    }
    /* the run into the per-day rollup that retrig flakes reads; left queued if this fails */
    if (rt_history_rollup(pg, 5000, NULL) != RT_OK)
        rt_log_warn("the run is recorded but not yet in the rollup; retrig-history or the next"
                    " ingest adds it",
                    "error", rt_pg_errstr(pg));
    size_t failing = 0;
    for (size_t i = 0; i < rows.ntests; i++) failing += rows.tests[i].failed;
    printf("%s run %s: %zu tests (%zu testcases read), %zu failing, %zu groups%s\n", project,
           run_id, rows.ntests, stats.testcases, failing, rows.ngroups,
           inserted ? "" : " (run already known; merged)");
    if (stats.set_aside > 0) /* the first reasons; retrig junit lists them */
        printf("%zu testcases set aside (malformed), the first: %s\n", stats.set_aside,
               stats.aside[0]);
    status = 0;
out:
    rt_history_rows_free(&rows);
    rt_pg_free(pg);
    return status;
}
