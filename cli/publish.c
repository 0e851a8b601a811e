/* SPDX-License-Identifier: MPL-2.0 */
/* publish.c - `retrig publish`: publishes message files to an exchange of our broker with
 * confirms. Used by the local demo and tests to play recorded Pulse messages as Taskcluster
 * would (with the task's routes as the CC header). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/io/amqp.h"
#include "common/options.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: retrig publish --exchange NAME [--routing-key KEY] [--cc ROUTE]...\n"
                 "                      [--declare] FILE...\n"
                 "Publishes each FILE (one message body each) to exchange NAME on amqp_url, with\n"
                 "publisher confirms. --cc adds a CC route header (as Taskcluster does with a\n"
                 "task's routes); --declare declares the exchange (topic) first.\n");
}

int rt_cli_publish(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"exchange", required_argument, NULL, 'e'}, {"routing-key", required_argument, NULL, 'k'},
        {"cc", required_argument, NULL, 'c'},       {"declare", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    const char *exchange = NULL, *key = "primary";
    const char *cc[64];
    size_t ncc = 0;
    int declare = 0, c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'e': exchange = optarg; break;
        case 'k': key = optarg; break;
        case 'c':
            if (ncc == sizeof cc / sizeof cc[0]) {
                usage(stderr);
                return 2;
            }
            cc[ncc++] = optarg;
            break;
        case 'd': declare = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!exchange || optind >= argc) {
        usage(stderr);
        return 2;
    }
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_amqp_options opts;
    rt_amqp_options_from_config(&opts, cfg, "cli");
    rt_amqp *amqp = NULL;
    int status = 1;
    if (rt_amqp_new(&amqp, &opts, errstr) != RT_OK ||
        rt_amqp_ensure_connected(amqp, 10000) != RT_OK) {
        rt_log_error("cannot connect to the broker", "error", amqp ? rt_amqp_errstr(amqp) : errstr);
        goto out;
    }
    if (declare && rt_amqp_declare_exchange(amqp, exchange, "topic") != RT_OK) {
        rt_log_error("cannot declare the exchange", "exchange", exchange, "error",
                     rt_amqp_errstr(amqp));
        goto out;
    }
    rt_amqp_publish_opts popts = {.cc = cc, .cc_count = ncc, .allow_unroutable = true};
    for (int i = optind; i < argc; i++) {
        size_t len = 0;
        char *body = rt__cli_read_file(argv[i], 64 << 20, &len, "the message file");
        if (!body) goto out;
        int rc = rt_amqp_publish(amqp, exchange, key, body, len, &popts);
        free(body);
        if (rc != RT_OK) {
            rt_log_error("publish failed", "file", argv[i], "error", rt_amqp_errstr(amqp));
            goto out;
        }
    }
    status = 0;
out:
    rt_amqp_free(amqp);
    return status;
}
