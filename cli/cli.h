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

#endif
