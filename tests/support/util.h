/* SPDX-License-Identifier: MPL-2.0 */
/* util.h - small helpers shared by retrig's tests: fixture paths, files, unique names.
 * Include <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h> come with it. */
#ifndef RETRIG_TESTS_SUPPORT_UTIL_H
#define RETRIG_TESTS_SUPPORT_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Path of a file under tests/fixtures (static buffer, valid until the next call). */
const char *rt_test_fixture(const char *relative);
/* Path of a file under the source tree (static buffer, valid until the next call). */
const char *rt_test_source(const char *relative);
/* Reads a whole file (NUL-terminated, malloc'd); fails the test when it cannot. */
char *rt_test_read_file(const char *path, size_t *len);
/* Writes a file; fails the test when it cannot. */
void rt_test_write_file(const char *path, const char *text);
/* A name unique to this process and call: "<prefix>_<pid>_<counter>_<random>". */
void rt_test_unique_name(char *out, size_t size, const char *prefix);
/* A new temporary directory (mkdtemp under /tmp); the path is malloc'd. */
char *rt_test_tempdir(void);
/* Monotonic milliseconds. */
int64_t rt_test_now_ms(void);

#endif
