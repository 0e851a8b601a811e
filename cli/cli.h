/* SPDX-License-Identifier: MPL-2.0 */
/* cli.h - subcommands of the `retrig` command-line tool. Each takes the arguments after
 * its name (argv[0] is the subcommand) and the loaded configuration, and returns the
 * process exit code: 0 success, 1 failure, 2 usage or configuration error. */
#ifndef RETRIG_CLI_H
#define RETRIG_CLI_H

#include "common/config.h"

int rt_cli_migrate(int argc, char **argv, rt_config *cfg);
int rt_cli_errorsummary(int argc, char **argv, rt_config *cfg);
int rt_cli_junit(int argc, char **argv, rt_config *cfg);
int rt_cli_eligibility(int argc, char **argv, rt_config *cfg);
int rt_cli_publish(int argc, char **argv, rt_config *cfg);
int rt_cli_render_action(int argc, char **argv, rt_config *cfg);
int rt_cli_decide(int argc, char **argv, rt_config *cfg);
int rt_cli_decisions(int argc, char **argv, rt_config *cfg);
int rt_cli_explain(int argc, char **argv, rt_config *cfg);
int rt_cli_perf_pick(int argc, char **argv, rt_config *cfg);
int rt_cli_perf_report(int argc, char **argv, rt_config *cfg);
int rt_cli_ingest_junit(int argc, char **argv, rt_config *cfg);
int rt_cli_flakes(int argc, char **argv, rt_config *cfg);
int rt_cli_report(int argc, char **argv, rt_config *cfg);
int rt_cli_seed_history(int argc, char **argv, rt_config *cfg);
int rt_cli_simulate(int argc, char **argv, rt_config *cfg);
int rt_cli_culprit(int argc, char **argv, rt_config *cfg);
int rt_cli_followup(int argc, char **argv, rt_config *cfg);
int rt_cli_collect_github(int argc, char **argv, rt_config *cfg);
int rt_cli_flaky_issues(int argc, char **argv, rt_config *cfg);

/* Text from the database or an upstream, made safe to print (control characters, ESC, C1
 * and bidi overrides escaped; rt_utf8_printable). Valid until 31 more calls; NULL gives
 * "-". Every table and human-readable line of the CLI prints such text through it. */
const char *rt_cli_text(const char *s);

/* Shared by flakes.c and report.c. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#include "common/io/pg.h"

typedef struct rt__flakes_query {
    const char *project; /* the repository */
    const char *window;  /* a Postgres interval: "7 days" */
    const char *until;   /* a timestamptz text: "now" or ISO-8601 */
    bool main_only;
    int min_branches;
    int flaky_window_days;
    int limit;
    const char *trusted; /* author associations whose fork PRs count, comma-separated */
} rt__flakes_query;

/* Connects to database_url for a command (program names the session: "cli"). 0, or 1
 * after telling the person what failed and what to try. */
int rt__cli_connect(const rt_config *cfg, const char *program, rt_pg **pg);
/* The same for the commands that only read the test history (retrig flakes, retrig report):
 * history_read_url (a replica) when set, in read-only sessions; else database_url. */
int rt__cli_connect_read(const rt_config *cfg, const char *program, rt_pg **pg);
/* Logs a failed statement ("what" failed: the server's message), with a hint when one helps
 * (a schema that is not migrated, say). */
void rt__cli_db_error(rt_pg *pg, const char *what);

/* --token-file: the token in its first line becomes cfg's github_token (and a secret the
 * logs redact). 0, or 2 after saying what failed. */
int rt__cli_token_file(rt_config *cfg, const char *path);

/* Writes a page to path through path.tmp and a rename, so a reader never sees half a page:
 * write(f, ctx) returns 0 on success. 0, or 1 after saying what failed (what: "the page"). */
int rt__cli_write_file(const char *path, const char *what, int (*write)(FILE *f, const void *ctx),
                       const void *ctx);

/* A whole input file (path, "-": standard input) of at most max bytes, NUL-terminated; NULL
 * after logging "cannot read <what>" with the file and the reason. */
char *rt__cli_read_file(const char *path, size_t max, size_t *len, const char *what);

/* --format: "table" or "json" (*json set), 0; else 2 after saying so. */
int rt__cli_format(const char *arg, bool *json);

/* A whole decimal number (a double) in [min, max] into *out: 0, else -1 (out untouched). */
int rt__cli_parse_long(const char *text, long min, long max, long *out);
int rt__cli_parse_double(const char *text, double min, double max, double *out);

/* "7d" -> "7 days" (h, d, w); -1 when malformed. */
int rt__cli_parse_duration(const char *text, char *out, size_t size);
/* The rows of history_flakes as the JSON array `retrig flakes --format json` prints; NULL
 * (logged) on a database error. */
json_t *rt__cli_flakes(rt_pg *pg, const rt__flakes_query *q);
/* The same, asked without waiting (rt__cli_flakes_send: 0, or -1 logged) and collected later
 * (rt__cli_flakes_wait): retrig report reads two windows at once on two connections. */
int rt__cli_flakes_send(rt_pg *pg, const rt__flakes_query *q);
json_t *rt__cli_flakes_wait(rt_pg *pg);
/* The trust rule on rows of rt__cli_flakes (issue 31): a test stays flaky only when more
 * than q->min_branches of the branches under review it failed on are the repository's own
 * or fork pull requests of trusted authors (q->trusted, flaky_issues_trusted_associations);
 * each row gains fork_branches (the fork pull requests of others it failed on: evidence,
 * never counted) and, when those alone made it flaky, flaky_through_forks. 0, or -1 logged. */
int rt__cli_flakes_trust(rt_pg *pg, const rt__flakes_query *q, json_t *rows);
/* cfg's flaky_issues_trusted_associations, comma-separated, into out. */
const char *rt__cli_trusted_associations(const rt_config *cfg, char *out, size_t size);
/* The end of a history window: until itself, or for "now" the end of today (UTC, into out),
 * so that a window of days is whole UTC days and history_flakes reads the per-day rollup
 * (migrations/0020) rather than the raw partitions. */
const char *rt__cli_history_until(const char *until, char out[32]);
/* What the test history of a repository rests on in [start, until) (window_seconds long):
 * {"repository", "window": {start, until}, "runs", "main_runs", "pushes", "main_pushes",
 *  "other_branches", "prs", "failures_only_runs", "first_run", "last_run",
 *  "days": [{day, runs, main_runs}], "projects": [{project, branch_class, source, runs,
 *  pushes, last_run, branches, prs}], "sources": {source: runs}, "gaps": [{kind, from, to,
 *  hours, what[, detail]}], "gap_threshold_hours", "notes": [text]}. A collector may add
 * its own gaps and notes: the flaky-test page draws whatever the object holds. NULL
 * (logged) on a database error. (coverage.c) */
json_t *rt__cli_coverage(rt_pg *pg, const rt_config *cfg, const char *repository, const char *start,
                         const char *until, long long window_seconds);
/* `retrig report --decisions`: the sheriffs' page (report_decisions.c). */
int rt__cli_report_decisions(int argc, char **argv, rt_config *cfg);

#endif
