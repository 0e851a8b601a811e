/* SPDX-License-Identifier: MPL-2.0 */
/* cli_run.h - runs a built program of RT_TEST_BIN_DIR ("retrig") as a child process with
 * extra environment variables, capturing its stdout and stderr, or starts it in the
 * background. The child gets only our RETRIG_* variables (the test's own are dropped, as an
 * unknown one is an error) and dies with the test (PR_SET_PDEATHSIG). Not thread-safe. */
#ifndef RETRIG_TESTS_SUPPORT_CLI_RUN_H
#define RETRIG_TESTS_SUPPORT_CLI_RUN_H

#include <sys/types.h>

/* env: "NAME=value" strings ended by NULL; argv: the program name then its arguments,
 * ended by NULL. Returns the exit status (128 + signal when killed); *out and *err (may be
 * NULL) receive what it printed (malloc'd). Fails the test when it cannot run. */
int rt_test_run(const char *const *env, const char *const *argv, char **out, char **err);
/* Starts it in the background, stdout and stderr to /dev/null; returns the pid. */
pid_t rt_test_spawn(const char *const *env, const char *const *argv);
/* Waits for a child; the exit status as rt_test_run gives it. */
int rt_test_wait(pid_t pid);

#endif
