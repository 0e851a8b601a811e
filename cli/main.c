/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - the `retrig` command-line tool: dispatches to subcommands. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/config.h"
#include "common/io/log.h"

typedef int (*rt_cli_fn)(int argc, char **argv, rt_config *cfg);

static int print_config(int argc, char **argv, rt_config *cfg)
{
    (void)argc;
    (void)argv;
    rt_config_print(cfg, stdout);
    return 0;
}

/* Every subcommand: its name, what runs it (NULL: answered before the configuration is
 * loaded) and its lines of `retrig help`, in the order help prints them. */
static const struct {
    const char *name;
    rt_cli_fn run;
    const char *help;
} commands[] = {
    {"migrate", rt_cli_migrate,
     "  migrate [--status]   apply pending SQL migrations (migrations_dir), then the SQL\n"
     "                       function files that changed, to database_url\n"},
    {"eligibility", rt_cli_eligibility,
     "  eligibility --message F --task F [--errorsummary F]... [--classification ID]\n"
     "                       replay retrig-classify's decision for one task run\n"},
    {"errorsummary", rt_cli_errorsummary,
     "  errorsummary FILE... classify errorsummary artifacts (test-failure, infra, pass)\n"},
    {"junit", rt_cli_junit,
     "  junit FILE... [--format table|json]\n"
     "                       what would be stored of JUnit XML reports, and what set aside\n"},
    {"decide", rt_cli_decide,
     "  decide --original F [--retrigger F]... [--passed N] [--threshold N]\n"
     "                       replay retrig-decide's verdict from bug_suggestions files\n"},
    {"simulate", rt_cli_simulate,
     "  simulate --cases F [--policy seed|adaptive|mozci]... [--format table|json]\n"
     "  simulate --generate N --seed S [--mix uniform|observed] [--regression-share P]\n"
     "                       verdict policies over simulated failures, or such failures\n"},
    {"culprit", rt_cli_culprit,
     "  culprit --pushes FILE [--history-runs N --history-failures K] [--confidence C]\n"
     "          [--threshold N] [--max-jobs N] [--policy seed|adaptive]\n"
     "                       the next probe of a search for the push that caused a\n"
     "                       regression, or the culprit (--simulate N: a benchmark)\n"},
    {"decisions", rt_cli_decisions,
     "  decisions [--since 24h] [--project P] [--verdict V] [--format table|json]\n"
     "                       list the verdicts retrig-decide stored\n"
     "  decisions --estimate-prior [--since 30d] [--project P]\n"
     "                       decide_prior_regression from past decisions\n"},
    {"explain", rt_cli_explain,
     "  explain TASK_ID      the whole story of the retrigger set of a task\n"},
    {"ingest-junit", rt_cli_ingest_junit,
     "  ingest-junit --project OWNER/REPO --branch NAME [--pr N] [--main] --run-id ID\n"
     "               --revision SHA [--time ISO-8601] FILE...\n"
     "                       record JUnit XML reports of a CI run in the test history\n"},
    {"flakes", rt_cli_flakes,
     "  flakes --project P [--window 7d] [--min-branches N] [--main-only]\n"
     "         [--format json|table]\n"
     "                       the failing and flaky tests of the test history\n"},
    {"collect-github", rt_cli_collect_github,
     "  collect-github --repo OWNER/NAME [--workflow FILE]... [--since 7d]\n"
     "         [--artifact-pattern GLOBS] [--token-file F] [--max-requests N] [--interval 1h]\n"
     "                       store the JUnit results of a GitHub project's Actions runs\n"},
    {"flaky-issues", rt_cli_flaky_issues,
     "  flaky-issues --project OWNER/NAME [--dry-run | --apply] [--format table|json]\n"
     "                       open, update, close and reopen one issue per flaky test\n"},
    {"report", rt_cli_report,
     "  report --project P --out FILE [--window 30d] [--link HREF]\n"
     "                       write the flaky-test page, one self-contained HTML file\n"
     "  report --decisions --out FILE [--since 14d] [--link HREF]\n"
     "                       write the sheriffs' page: verdicts, evidence, budgets\n"},
    {"seed-history", rt_cli_seed_history,
     "  seed-history [--seed N] [--days 30] [--tests 300] [--until T] [--hostile]\n"
     "                       write a realistic test history (demo, tests)\n"},
    {"perf-pick", rt_cli_perf_pick,
     "  perf-pick --summaries F [--now ISO-8601] [--used FAMILY=N]... [--explain]\n"
     "                       the Perfherder alerts retrig-perf would backfill, offline\n"},
    {"followup", rt_cli_followup,
     "  followup --facts FILE\n"
     "                       what retrig-perf's follow-up makes of a backfill's facts\n"},
    {"perf-report", rt_cli_perf_report,
     "  perf-report [--day YYYY-MM-DD] [--format table|json]\n"
     "                       retrig-perf's backfills of a day: budget, jobs, failures\n"},
    {"render-action", rt_cli_render_action,
     "  render-action --actions F --task F --task-id ID [--action NAME] [--times N]\n"
     "                [--depth N]\n"
     "                       the hook call a worker would make (its input), offline\n"},
    {"publish", rt_cli_publish,
     "  publish --exchange X [--cc ROUTE]... FILE...\n"
     "                       publish message files to our broker (demo, tests)\n"},
    {"config", print_config,
     "  config [--keys]      print the effective configuration (secrets as ***),\n"
     "                       or with --keys every key, its default and its meaning\n"},
    {"version", NULL, "  version              print the version\n"},
    {"help", NULL, "  help                 print this help\n"},
};

static void usage(FILE *out)
{
    fputs("usage: retrig [--config FILE] COMMAND [ARGS]\n"
          "\n"
          "retrig watches Mozilla CI through Pulse and retriggers failed tests to tell a\n"
          "regression from an intermittent. This tool runs the offline commands.\n"
          "\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) fputs(commands[i].help, out);
    fputs("\n"
          "options:\n"
          "  -c, --config FILE    configuration file (default: $RETRIG_CONFIG)\n"
          "      --log-format F   auto (text on a terminal, else JSON lines), json or text\n"
          "  -h, --help           print this help\n"
          "  -V, --version        print the version\n"
          "\n"
          "Configuration: defaults, then the file, then RETRIG_<KEY> environment variables.\n"
          "Exit codes: 0 success, 1 failure, 2 usage or configuration error.\n",
          out);
}

static rt_cli_fn find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) return commands[i].run;
    return NULL;
}

static int print_keys(void)
{
    for (const rt_config_key *k = rt_config_keys; k->name; k++) {
        char env[96];
        size_t n = (size_t)snprintf(env, sizeof env, "RETRIG_");
        for (const char *c = k->name; *c && n + 1 < sizeof env; c++)
            env[n++] = (char)((*c >= 'a' && *c <= 'z') ? *c - 32 : *c);
        env[n] = '\0';
        printf("%s\t%s\t%s\t%s\n", k->name, env, k->default_value ? k->default_value : "", k->help);
    }
    return 0;
}

/* The global options, the commands that run without a configuration (help, version,
 * config --keys), then the configuration and the subcommand's own function. */
int main(int argc, char **argv)
{
    const char *config_path = NULL;
    static const struct option options[] = {
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"log-format", required_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    const char *log_format = NULL;
    rt_log_init("retrig");
    int c;
    /* '+' stops at the first non-option: the subcommand parses the rest. */
    while ((c = getopt_long(argc, argv, "+c:hV", options, NULL)) != -1) {
        switch (c) {
        case 'c': config_path = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("retrig %s\n", RETRIG_VERSION); return 0;
        case 'L': {
            rt_log_format format;
            if (rt_log_parse_format(optarg, &format) != RT_OK) {
                fprintf(stderr, "retrig: --log-format is auto, json or text, not '%s'\n", optarg);
                return 2;
            }
            rt_log_set_format(format);
            log_format = optarg;
            break;
        }
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    const char *command = argv[optind];
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    if (!strcmp(command, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(command, "version")) {
        printf("retrig %s\n", RETRIG_VERSION);
        return 0;
    }
    if (!strcmp(command, "config") && sub_argc > 1 && !strcmp(sub_argv[1], "--keys"))
        return print_keys();

    rt_config cfg;
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_config_load(&cfg, config_path, errstr) != RT_OK) {
        rt_log_error("configuration error", "error", errstr);
        rt_config_free(&cfg);
        return 2;
    }
    if (log_format) { /* the flag wins over log_format */
        rt_log_format format;
        if (rt_log_parse_format(log_format, &format) == RT_OK) rt_log_set_format(format);
    }
    int status;
    rt_cli_fn run = find_command(command);
    if (run) {
        optind = 1; /* subcommands run getopt again over their own argv */
        status = run(sub_argc, sub_argv, &cfg);
    } else {
        rt_log_error("unknown command", "command", command);
        usage(stderr);
        status = 2;
    }
    rt_config_free(&cfg);
    return status;
}
