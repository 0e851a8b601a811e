/* SPDX-License-Identifier: MPL-2.0 */
/* matrix_variant.h - a GitHub variant (the matrix job: its artifact's name, or its job's name)
 * read as the operating system, Python version and partition it ran (issue 31), so that a
 * test's failures can be told per OS and a test failing on Windows only says so. Pure: no
 * I/O, no allocation, no globals; thread-safe.
 *
 * The names are the projects' own; those read (tests/unit/test_matrix_variant.c):
 *   dask/distributed, artifact $TEST_ID "<os>-<environment>-<label>-<partition>", the
 *     partition's space removed: "ubuntu-latest-3.12-default-ci1",
 *     "ubuntu-latest-mindeps-numpy-notci1", and since its pixi migration (2026)
 *     "<os>-<environment>-<task>-<partition>": "ubuntu-24.04-arm-py310-test-ci-notci1";
 *   dask/dask, "<os>-<environment>-<extra>" (extra often empty): "macos-14-3.12-",
 *     "ubuntu-latest-3.12-pandas-nightly", "ubuntu-latest-mindeps-array-";
 *   GitHub's default matrix job names and names built from them:
 *     "test (windows-latest, 3.11)", "test-results (ubuntu-latest, 3.11)",
 *     "test-results-windows-2022-py311", "junit-macos-13-python3.9-shard-2".
 *
 * The rule: the name is cut into words at '-', '_', ' ', ',', '(', ')', '[', ']', ':' and
 * '\t'. The OS is the first word naming one (ubuntu, windows, macos, linux, win, mac, osx,
 * darwin, debian, fedora, alpine, centos; "windows11" too) with the words that follow it
 * while they qualify it: at most one version ("latest", or a number whose first group has
 * two or more digits: "22.04", "2022", "14"; a one-digit group such as "3.12" is Python's)
 * and any architecture or size words (arm, arm64, x64, x86, amd64, aarch64, intel, large,
 * xlarge). The Python version is the first word "3.12" (2.x or 3.x, "t" for free-threaded
 * allowed), "py312", "py3.12", "python3.12", "cp312" (written 3.12) or "pypy3.10"/"pypy310"
 * (written pypy3.10). The partition is the first word "ci1"/"notci1" ("not ci1" in a job
 * name), "1of4" or "1/4", or "shard", "part", "partition", "group", "chunk", "split",
 * "slice" with its number ("shard-2" and "shard2" are "shard2"). Every other word that is
 * not filler (test, tests, result(s), report(s), junit, pytest, xml, artifact(s), ci,
 * default, run, unit, coverage, none, null) is part of the job's label ("mindeps-array",
 * "no_queue"), as written. A name in which none of OS, Python and partition is found does
 * not parse: it is shown as it is. */
#ifndef RETRIG_COMMON_MATRIX_VARIANT_H
#define RETRIG_COMMON_MATRIX_VARIANT_H

#include <stdbool.h>
#include <stddef.h>

#define RT_MATRIX_FIELD_MAX 64 /* bytes of one field, NUL included; longer ones are cut */

typedef struct rt_matrix_variant {
    char os[RT_MATRIX_FIELD_MAX];        /* "windows-latest", "ubuntu-24.04-arm"; "" unknown */
    const char *os_family;               /* "Windows", "macOS", "Linux"; NULL unknown */
    char python[RT_MATRIX_FIELD_MAX];    /* "3.12", "3.14t", "pypy3.10"; "" unknown */
    char partition[RT_MATRIX_FIELD_MAX]; /* "ci1", "notci1", "1of4", "shard2"; "" none */
    char label[RT_MATRIX_FIELD_MAX];     /* the other words: "mindeps-array"; "" none */
} rt_matrix_variant;

/* Reads name by the rule above into *out (zeroed first). True when any of OS, Python and
 * partition was found. */
bool rt_matrix_variant_parse(const char *name, rt_matrix_variant *out);

/* The compact form of name: "windows-latest py3.12 ci1" (OS, Python, label, partition, the
 * known ones), or name itself when it does not parse; cut to size bytes. */
void rt_matrix_variant_describe(const char *name, char *out, size_t size);

#endif
