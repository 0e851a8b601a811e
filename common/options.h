/* SPDX-License-Identifier: MPL-2.0 */
/* options.h - the io layer's option structs filled from the configuration: the one place where
 * common/io meets rt_config, so that no header of common/io includes the layer above it.
 * Pure copies of pointers and numbers; thread-safe. */
#ifndef RETRIG_COMMON_OPTIONS_H
#define RETRIG_COMMON_OPTIONS_H

#include "common/config.h"
#include "common/io/amqp.h"
#include "common/io/http.h"

/* Fills options from the configuration: amqp_url, amqp_ca_file, amqp_prefetch,
 * amqp_quorum_queues. Pointers borrow from cfg. For Pulse set opts->url = cfg->pulse_url
 * afterwards. */
void rt_amqp_options_from_config(rt_amqp_options *opts, const rt_config *cfg, const char *worker);

/* The options from the http_* keys of the configuration (sleep_ms NULL). The strings
 * point into cfg, which must outlive the call to rt_http_new. */
void rt_http_options_from_config(rt_http_options *opts, const rt_config *cfg);

#endif
