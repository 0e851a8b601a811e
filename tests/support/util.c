/* SPDX-License-Identifier: MPL-2.0 */
/* util.c - helpers shared by retrig's tests. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *rt_test_fixture(const char *relative)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", RT_TEST_FIXTURES_DIR, relative);
    return path;
}

const char *rt_test_source(const char *relative)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", RT_TEST_SOURCE_DIR, relative);
    return path;
}

char *rt_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (size_t)size, f);
    fclose(f);
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

void rt_test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

void rt_test_unique_name(char *out, size_t size, const char *prefix)
{
    static unsigned counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(out, size, "%s_%d_%u_%lx", prefix, (int)getpid(), counter++,
             (unsigned long)(ts.tv_nsec ^ ts.tv_sec));
}

char *rt_test_tempdir(void)
{
    char *dir = strdup("/tmp/retrig-test-XXXXXX");
    assert_non_null(dir);
    if (!mkdtemp(dir)) fail_msg("mkdtemp failed");
    return dir;
}

int64_t rt_test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
