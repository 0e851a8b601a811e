/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_matrix_variant.c - libFuzzer target for the reading of GitHub matrix job names (an
 * artifact's name is anyone's choice in a fork's workflow): no crash, every field a C string
 * within its bounds, an OS only with its family, and the compact form within its buffer,
 * the name itself when nothing was read. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/matrix_variant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    if (!name) return 0;
    memcpy(name, data, size);
    name[size] = '\0';
    rt_matrix_variant v;
    bool parsed = rt_matrix_variant_parse(name, &v);
    const char *fields[] = {v.os, v.python, v.partition, v.label};
    for (size_t i = 0; i < 4; i++)
        if (strnlen(fields[i], RT_MATRIX_FIELD_MAX) >= RT_MATRIX_FIELD_MAX) abort();
    if ((v.os[0] != '\0') != (v.os_family != NULL)) abort();
    if (parsed != (v.os_family || v.python[0] || v.partition[0])) abort();
    char described[96];
    memset(described, 'x', sizeof described);
    rt_matrix_variant_describe(name, described, sizeof described);
    if (strnlen(described, sizeof described) >= sizeof described) abort();
    if (!parsed && strncmp(described, name, sizeof described - 1)) abort();
    free(name);
    return 0;
}
