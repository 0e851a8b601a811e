/* SPDX-License-Identifier: MPL-2.0 */
/* artifact_zip.c - bounded reading of zip archives in memory with libzip. */
#include "common/io/artifact_zip.h"

#include <fnmatch.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define READ_CHUNK 65536
#define MAX_FAILED 3 /* damaged entries (CRC, inflate errors) that stop the artifact */

/* Inflates entry i into buf, at most want bytes (*got of them, also when it fails): RT_OK,
 * or RT_EPROTO when the entry cannot be opened or fails to inflate or its CRC check. */
static int inflate_entry(zip_t *archive, zip_uint64_t i, char *buf, size_t want, size_t *got)
{
    zip_file_t *f = zip_fopen_index(archive, i, 0);
    if (!f) return RT_EPROTO;
    int rc = RT_OK;
    while (*got < want) {
        size_t chunk = want - *got < READ_CHUNK ? want - *got : READ_CHUNK;
        zip_int64_t r = zip_fread(f, buf + *got, chunk);
        if (r < 0) {
            rc = RT_EPROTO;
            break;
        }
        if (r == 0) break;
        *got += (size_t)r;
    }
    zip_fclose(f);
    return rc;
}

int rt_zip_each(const void *data, size_t len, const rt_zip_limits *limits, const char *glob,
                rt_zip_file_fn *fn, void *ctx, rt_zip_stats *stats, char *errstr)
{
    memset(stats, 0, sizeof *stats);
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t *src = NULL;
    zip_t *archive = NULL;
    char *buf = NULL;
    int rc = RT_OK;
    if (!data || len == 0) {
        rt_set_errstr(errstr, "empty archive");
        return RT_EPROTO;
    }
    if (!(src = zip_source_buffer_create(data, len, 0, &error))) {
        rt_set_errstr(errstr, "%s", zip_error_strerror(&error));
        rc = RT_ENOMEM;
        goto out;
    }
    if (!(archive = zip_open_from_source(src, ZIP_RDONLY, &error))) {
        rt_set_errstr(errstr, "not a zip archive: %s", zip_error_strerror(&error));
        rc = RT_EPROTO;
        goto out; /* src is still ours */
    }
    src = NULL; /* the archive owns it now */
    zip_int64_t n = zip_get_num_entries(archive, 0);
    if (n < 0) {
        rt_set_errstr(errstr, "cannot count the archive's entries");
        rc = RT_EPROTO;
        goto out;
    }
    stats->entries = (size_t)n;
    if ((size_t)n > limits->max_entries) {
        rt_set_errstr(errstr, "%lld entries, more than %zu", (long long)n, limits->max_entries);
        rc = RT_ETOOBIG;
        goto out;
    }
    for (zip_uint64_t i = 0; i < (zip_uint64_t)n && rc == RT_OK; i++) {
        const char *name = zip_get_name(archive, i, ZIP_FL_ENC_GUESS);
        size_t name_len = name ? strlen(name) : 0;
        if (!name_len || name[name_len - 1] == '/' || name_len > 1024) continue;
        if (glob && fnmatch(glob, name, 0) != 0) continue;
        stats->matched++;
        size_t cap = limits->max_file_bytes + 1, got = 0;
        size_t room = limits->max_total_bytes - stats->total_bytes;
        free(buf);
        if (!(buf = malloc((cap < room + 1 ? cap : room + 1) + 1))) {
            rc = RT_ENOMEM;
            break;
        }
        size_t want = cap < room + 1 ? cap : room + 1; /* one byte more than allowed */
        int file_rc = inflate_entry(archive, i, buf, want, &got);
        if (file_rc == RT_OK && got > room) {
            stats->total_bytes += got;
            rt_set_errstr(errstr, "more than %zu bytes uncompressed in all",
                          limits->max_total_bytes);
            rc = RT_ETOOBIG;
            break;
        }
        if (file_rc == RT_OK && got > limits->max_file_bytes) {
            stats->too_big++;
            stats->total_bytes += got;
            rc = fn(ctx, name, NULL, 0, RT_ETOOBIG);
            continue;
        }
        if (file_rc != RT_OK) {
            /* what was inflated before the failure (a CRC is checked only at the end) was
             * work done: it counts toward the cap, and a few such entries end the walk */
            stats->total_bytes += got;
            stats->failed++;
            if (got > room) {
                rt_set_errstr(errstr, "more than %zu bytes uncompressed in all",
                              limits->max_total_bytes);
                rc = RT_ETOOBIG;
                break;
            }
            rc = fn(ctx, name, NULL, 0, file_rc);
            if (rc == RT_OK && stats->failed >= MAX_FAILED) {
                rt_set_errstr(errstr, "%zu damaged entries (CRC or inflate errors): refused",
                              stats->failed);
                rc = RT_EPROTO;
            }
            continue;
        }
        stats->total_bytes += got;
        buf[got] = '\0';
        rc = fn(ctx, name, buf, got, RT_OK);
    }
out:
    free(buf);
    if (archive) zip_discard(archive);
    if (src) zip_source_free(src);
    zip_error_fini(&error);
    return rc;
}
