/* SPDX-License-Identifier: MPL-2.0 */
/* main.c - retrig-decide entry point. */
#include "common/worker.h"

static int run(rt_config *cfg)
{
    (void)cfg;
    rt_log_error("retrig-decide has no consumer loop yet");
    return 1;
}

static int check(rt_config *cfg)
{
    (void)cfg;
    return 0;
}

int main(int argc, char **argv)
{
    static const rt_worker_def def = { "decide", "retrig-decide", run, check };
    return rt_worker_main(&def, argc, argv);
}
