/* SPDX-License-Identifier: MPL-2.0 */
/* migrate.c - `retrig migrate` (being written). */
#include "cli/cli.h"

int rt_cli_migrate(int argc, char **argv, rt_config *cfg)
{
    (void)argc; (void)argv; (void)cfg;
    rt_log_error("retrig migrate is not built yet");
    return 1;
}
