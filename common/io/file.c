/* SPDX-License-Identifier: MPL-2.0 */
/* file.c - whole files into memory, bounded. */
#include "common/io/file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rt_file_read(const char *path, size_t max, char **out, size_t *len, char *errstr)
{
    *out = NULL;
    *len = 0;
    bool is_stdin = !strcmp(path, "-");
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        rt_set_errstr(errstr, "cannot open %s: %s", path, strerror(errno));
        return RT_EIO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    int rc = RT_ENOMEM;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (ferror(f)) {
            rt_set_errstr(errstr, "cannot read %s: %s", path, strerror(errno));
            rc = RT_EIO;
            goto fail;
        }
        if (n < cap) break; /* end of file */
        if (cap > max) {
            rt_set_errstr(errstr, "%s is too big (more than %zu bytes)", path, max);
            rc = RT_ETOOBIG;
            goto fail;
        }
        char *bigger = realloc(buf, cap * 2 + 1);
        if (!bigger) goto fail;
        buf = bigger;
        cap *= 2;
    }
    if (!buf) goto fail;
    if (n > max) {
        rt_set_errstr(errstr, "%s is too big (more than %zu bytes)", path, max);
        rc = RT_ETOOBIG;
        goto fail;
    }
    if (!is_stdin) fclose(f);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return RT_OK;
fail:
    if (rc == RT_ENOMEM) rt_set_errstr(errstr, "out of memory reading %s", path);
    if (!is_stdin) fclose(f);
    free(buf);
    return rc;
}
