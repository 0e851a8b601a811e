/* SPDX-License-Identifier: MPL-2.0 */
/* worker.c - argument parsing and configuration loading shared by all worker binaries. */
#include "common/worker.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>

static void usage(const rt_worker_def *def, FILE *out)
{
    fprintf(out,
            "usage: retrig-%s [--config FILE] [--check-config]\n"
            "\n"
            "%s\n"
            "\n"
            "options:\n"
            "  -c, --config FILE    configuration file (default: $RETRIG_CONFIG)\n"
            "      --check-config   load the configuration, check that the services it names\n"
            "                       answer, and exit (0 when all do)\n"
            "  -h, --help           print this help\n"
            "  -V, --version        print the version\n"
            "\n"
            "Configuration: defaults, then the file, then RETRIG_<KEY> environment variables;\n"
            "`retrig config --keys` lists every key. Logs are JSON lines on stderr.\n"
            "Exit codes: 0 success, 1 failure, 2 usage or configuration error.\n",
            def->name, def->summary);
}

int rt_worker_main(const rt_worker_def *def, int argc, char **argv)
{
    static const struct option options[] = {
        { "config", required_argument, NULL, 'c' },
        { "check-config", no_argument, NULL, 'k' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    char program[64];
    snprintf(program, sizeof program, "retrig-%s", def->name);
    rt_log_init(program);
    signal(SIGPIPE, SIG_IGN);

    const char *config_path = NULL;
    int check_only = 0, c;
    while ((c = getopt_long(argc, argv, "c:hV", options, NULL)) != -1) {
        switch (c) {
        case 'c': config_path = optarg; break;
        case 'k': check_only = 1; break;
        case 'h': usage(def, stdout); return 0;
        case 'V': printf("%s %s\n", program, RETRIG_VERSION); return 0;
        default: usage(def, stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", program, argv[optind]);
        usage(def, stderr);
        return 2;
    }
    rt_config cfg;
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_config_load(&cfg, config_path, errstr) != RT_OK) {
        rt_log_error("configuration error", "error", errstr);
        rt_config_free(&cfg);
        return 2;
    }
    int status = check_only ? def->check(&cfg) : def->run(&cfg);
    rt_config_free(&cfg);
    return status;
}
