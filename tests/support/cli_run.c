/* SPDX-License-Identifier: MPL-2.0 */
/* cli_run.c - runs retrig's programs as children for tests. */
#include "support/cli_run.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/util.h"

extern char **environ;

static void child_setup(const char *const *env, int out_fd, int err_fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (char **e = environ; *e;) {
        if (!strncmp(*e, "RETRIG_", 7)) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
            unsetenv(name);
        } else {
            e++;
        }
    }
    for (size_t i = 0; env && env[i]; i++) putenv((char *)env[i]);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
}

static char *slurp(int fd)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (len + 4096 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        ssize_t n = read(fd, buf + len, 4095);
        if (n <= 0) break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return buf;
}

int rt_test_wait(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int rt_test_run(const char *const *env, const char *const *argv, char **out, char **err)
{
    char *dir = rt_test_tempdir(), out_path[256], err_path[256], program[512];
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    snprintf(err_path, sizeof err_path, "%s/err", dir);
    snprintf(program, sizeof program, "%s/%s", RT_TEST_BIN_DIR, argv[0]);
    int out_fd = open(out_path, O_CREAT | O_RDWR | O_TRUNC, 0600);
    int err_fd = open(err_path, O_CREAT | O_RDWR | O_TRUNC, 0600);
    assert_true(out_fd >= 0 && err_fd >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        child_setup(env, out_fd, err_fd);
        execv(program, (char *const *)argv);
        _exit(127);
    }
    int status = rt_test_wait(pid);
    lseek(out_fd, 0, SEEK_SET);
    lseek(err_fd, 0, SEEK_SET);
    char *o = slurp(out_fd), *e = slurp(err_fd);
    close(out_fd);
    close(err_fd);
    unlink(out_path);
    unlink(err_path);
    rmdir(dir);
    free(dir);
    if (out)
        *out = o;
    else
        free(o);
    if (err)
        *err = e;
    else
        free(e);
    return status;
}

pid_t rt_test_spawn(const char *const *env, const char *const *argv)
{
    char program[512];
    snprintf(program, sizeof program, "%s/%s", RT_TEST_BIN_DIR, argv[0]);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null_fd = open("/dev/null", O_WRONLY);
        child_setup(env, null_fd, null_fd);
        execv(program, (char *const *)argv);
        _exit(127);
    }
    return pid;
}
