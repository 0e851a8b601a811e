/* SPDX-License-Identifier: MPL-2.0 */
/* worker.h - the shared start-up of every retrig-<worker> binary: arguments, config,
 * logging. The worker's own loop is passed in as `run`. */
#ifndef RETRIG_COMMON_WORKER_H
#define RETRIG_COMMON_WORKER_H

#include "common/config.h"

typedef struct rt_worker_def {
    const char *name;        /* "classify" -> binary retrig-classify */
    const char *summary;     /* one line for --help */
    /* Runs the worker until shutdown; returns the exit code. */
    int (*run)(rt_config *cfg);
    /* Checks that every service the worker needs is reachable; returns the exit code. */
    int (*check)(rt_config *cfg);
} rt_worker_def;

/* Parses --config/--help/--version/--check-config, loads the configuration (exit 2 on
 * error), then calls def->check or def->run. */
int rt_worker_main(const rt_worker_def *def, int argc, char **argv);

#endif
