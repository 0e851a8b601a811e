/* SPDX-License-Identifier: MPL-2.0 */
/* test_matrix_variant.c - GitHub matrix job names read as OS, Python version and partition
 * (common/core/matrix_variant.h): the artifact names of dask/distributed (its TEST_ID before
 * and after its pixi migration) and dask/dask, GitHub's default matrix job names, names
 * that do not parse. */
#include "support/util.h"

#include <stdio.h>
#include <string.h>

#include "common/core/matrix_variant.h"

static void test_real_matrix_names_read_as_os_python_and_partition(void **state)
{
    (void)state;
    static const struct {
        const char *name, *os, *family, *python, *partition, *label, *described;
    } cases[] = {
        /* dask/distributed, .github/workflows/tests.yaml before 4578e5dbd (2026-06) */
        {"ubuntu-latest-3.12-default-ci1", "ubuntu-latest", "Linux", "3.12", "ci1", "",
         "ubuntu-latest py3.12 ci1"},
        {"windows-latest-3.10-default-notci1", "windows-latest", "Windows", "3.10", "notci1", "",
         "windows-latest py3.10 notci1"},
        {"ubuntu-latest-3.10-no_queue-ci1", "ubuntu-latest", "Linux", "3.10", "ci1", "no_queue",
         "ubuntu-latest py3.10 no_queue ci1"},
        {"ubuntu-latest-mindeps-numpy-notci1", "ubuntu-latest", "Linux", "", "notci1",
         "mindeps-numpy", "ubuntu-latest mindeps-numpy notci1"},
        {"macos-latest-3.14-default-ci1", "macos-latest", "macOS", "3.14", "ci1", "",
         "macos-latest py3.14 ci1"},
        /* dask/distributed after it (TEST_ID os-environment-task-partition; job names) */
        {"ubuntu-24.04-arm-py310-test-ci-notci1", "ubuntu-24.04-arm", "Linux", "3.10", "notci1", "",
         "ubuntu-24.04-arm py3.10 notci1"},
        {"ubuntu-latest-mindeps-array-test-ci-ci1", "ubuntu-latest", "Linux", "", "ci1",
         "mindeps-array", "ubuntu-latest mindeps-array ci1"},
        {"windows-latest py314 test-ci not ci1", "windows-latest", "Windows", "3.14", "notci1", "",
         "windows-latest py3.14 notci1"},
        /* dask/dask: os-environment-extra, extra often empty */
        {"macos-14-3.12-", "macos-14", "macOS", "3.12", "", "", "macos-14 py3.12"},
        {"ubuntu-latest-3.12-pandas-nightly", "ubuntu-latest", "Linux", "3.12", "",
         "pandas-nightly", "ubuntu-latest py3.12 pandas-nightly"},
        {"ubuntu-latest-mindeps-array-", "ubuntu-latest", "Linux", "", "", "mindeps-array",
         "ubuntu-latest mindeps-array"},
        /* GitHub's default matrix job names, and names built from them */
        {"test (windows-latest, 3.11)", "windows-latest", "Windows", "3.11", "", "",
         "windows-latest py3.11"},
        {"test-results (ubuntu-latest, pypy3.10)", "ubuntu-latest", "Linux", "pypy3.10", "", "",
         "ubuntu-latest pypy3.10"},
        {"test-results-windows-2022-py311", "windows-2022", "Windows", "3.11", "", "",
         "windows-2022 py3.11"},
        {"junit-macos-13-xlarge-python3.9-shard-2", "macos-13-xlarge", "macOS", "3.9", "shard2", "",
         "macos-13-xlarge py3.9 shard2"},
        {"pytest-results-cp314t-2of4", "", NULL, "3.14t", "2of4", "", "py3.14t 2of4"},
        {"test-results-windows-3.12", "windows", "Windows", "3.12", "", "", "windows py3.12"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rt_matrix_variant v;
        if (!rt_matrix_variant_parse(cases[i].name, &v)) fail_msg("'%s' not read", cases[i].name);
        if (strcmp(v.os, cases[i].os) || strcmp(v.python, cases[i].python) ||
            strcmp(v.partition, cases[i].partition) || strcmp(v.label, cases[i].label) ||
            (v.os_family == NULL) != (cases[i].family == NULL) ||
            (v.os_family && strcmp(v.os_family, cases[i].family)))
            fail_msg("'%s': os '%s' (%s) python '%s' partition '%s' label '%s'", cases[i].name,
                     v.os, v.os_family ? v.os_family : "-", v.python, v.partition, v.label);
        char described[128];
        rt_matrix_variant_describe(cases[i].name, described, sizeof described);
        if (strcmp(described, cases[i].described))
            fail_msg("'%s' described '%s'", cases[i].name, described);
    }
}

/* Names that name no OS, Python or partition keep the raw name. */
static void test_names_that_do_not_parse_stay_as_they_are(void **state)
{
    (void)state;
    static const char *const names[] = {"junit",      "Event File", "test-reports", "coverage-xml",
                                        "build 2022", "",           "windows",      NULL};
    for (size_t i = 0; names[i]; i++) {
        rt_matrix_variant v;
        bool parsed = rt_matrix_variant_parse(names[i], &v);
        char described[64];
        rt_matrix_variant_describe(names[i], described, sizeof described);
        if (!strcmp(names[i], "windows")) { /* an OS alone is an OS */
            assert_true(parsed);
            assert_string_equal(v.os_family, "Windows");
            continue;
        }
        if (parsed) fail_msg("'%s' read as os '%s' python '%s'", names[i], v.os, v.python);
        assert_string_equal(described, names[i]);
    }
    /* a cut description stays a C string */
    char small[8];
    rt_matrix_variant_describe("ubuntu-latest-3.12-default-ci1", small, sizeof small);
    assert_true(strlen(small) < sizeof small);
    rt_matrix_variant v;
    assert_false(rt_matrix_variant_parse(NULL, &v));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_matrix_names_read_as_os_python_and_partition),
        cmocka_unit_test(test_names_that_do_not_parse_stay_as_they_are),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
