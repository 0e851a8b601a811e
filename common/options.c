/* SPDX-License-Identifier: MPL-2.0 */
/* options.c - the io layer's option structs filled from the configuration (options.h). */
#include "common/options.h"

#include <string.h>

void rt_amqp_options_from_config(rt_amqp_options *opts, const rt_config *cfg, const char *worker)
{
    memset(opts, 0, sizeof *opts);
    opts->url = cfg->amqp_url;
    opts->ca_file = cfg->amqp_ca_file;
    opts->prefetch = cfg->amqp_prefetch;
    opts->worker = worker;
    opts->quorum_work_queues = cfg->amqp_quorum_queues;
}

void rt_http_options_from_config(rt_http_options *opts, const rt_config *cfg)
{
    memset(opts, 0, sizeof *opts);
    opts->connect_timeout_ms = cfg->http_connect_timeout_ms;
    opts->timeout_ms = cfg->http_timeout_ms;
    opts->max_body_bytes = cfg->http_max_body_bytes;
    opts->max_attempts = cfg->http_max_attempts;
    opts->backoff_base_ms = cfg->http_backoff_base_ms;
    opts->backoff_max_ms = cfg->http_backoff_max_ms;
    opts->ca_file = cfg->http_ca_file;
}
