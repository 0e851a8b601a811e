/* SPDX-License-Identifier: MPL-2.0 */
/* cli.h - subcommands of the `retrig` command-line tool. Each takes the arguments after
 * its name (argv[0] is the subcommand) and the loaded configuration, and returns the
 * process exit code: 0 success, 1 failure, 2 usage or configuration error. */
#ifndef RETRIG_CLI_H
#define RETRIG_CLI_H

#include "common/config.h"

int rt_cli_migrate(int argc, char **argv, rt_config *cfg);
int rt_cli_errorsummary(int argc, char **argv, rt_config *cfg);
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
int rt_cli_simulate(int argc, char **argv, rt_config *cfg);
int rt_cli_culprit(int argc, char **argv, rt_config *cfg);
int rt_cli_followup(int argc, char **argv, rt_config *cfg);
int rt_cli_collect_github(int argc, char **argv, rt_config *cfg);
int rt_cli_flaky_issues(int argc, char **argv, rt_config *cfg);

/* Shared by flakes.c and report.c. */
#include <jansson.h>
#include <stdbool.h>
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

/* "7d" -> "7 days" (h, d, w); -1 when malformed. */
int rt__cli_parse_duration(const char *text, char *out, size_t size);
/* The rows of history_flakes as the JSON array `retrig flakes --format json` prints; NULL
 * (logged) on a database error. */
json_t *rt__cli_flakes(rt_pg *pg, const rt__flakes_query *q);

#endif
