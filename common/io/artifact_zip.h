/* SPDX-License-Identifier: MPL-2.0 */
/* artifact_zip.h - reads the files of a CI artifact (a zip archive held in memory, as
 * GitHub serves artifacts) with libzip, bounded against zip bombs: at most max_entries
 * entries, at most max_file_bytes read from any file and max_total_bytes from all of them.
 * Sizes are counted while decompressing (a header's declared size is not trusted), those of
 * entries that then fail (a CRC is checked only at their end) included; the third entry
 * that fails to decompress stops the walk (RT_EPROTO). Only
 * regular files whose path matches the glob are read; directories and others are skipped.
 *
 * Pure (memory in, callbacks out; no file or network access). Untrusted input: a damaged
 * archive is RT_EPROTO with errstr, never a crash. Thread-safe per call. */
#ifndef RETRIG_COMMON_ARTIFACT_ZIP_H
#define RETRIG_COMMON_ARTIFACT_ZIP_H

#include "common/not_core.h"

#include <stddef.h>

#include "common/core/errors.h"

typedef struct rt_zip_limits {
    size_t max_entries;     /* entries in the archive (all of them, read or not) */
    size_t max_file_bytes;  /* uncompressed bytes of one file read */
    size_t max_total_bytes; /* uncompressed bytes of all files read */
} rt_zip_limits;

typedef struct rt_zip_stats {
    size_t entries; /* in the archive */
    size_t matched; /* files whose name matched */
    size_t too_big; /* matched files over max_file_bytes (passed to the callback with RT_ETOOBIG) */
    size_t failed;  /* matched files that could not be decompressed (CRC, inflate errors) */
    size_t total_bytes;
} rt_zip_stats;

/* Called once per matched file: rc RT_OK with its bytes (data NUL-terminated, len bytes,
 * valid during the call), or RT_ETOOBIG (data NULL) for a file over max_file_bytes, or
 * RT_EPROTO (data NULL) for a file that cannot be decompressed. A non-zero return stops
 * the walk and is returned. */
typedef int rt_zip_file_fn(void *ctx, const char *name, const char *data, size_t len, int rc);

/* Walks the archive. RT_OK; RT_EPROTO (not a zip archive, damaged, or 3 entries that fail to
 * decompress: the walk stops at the third); RT_ETOOBIG (more than
 * max_entries entries, or max_total_bytes passed: the walk stops there, files before it
 * were given); RT_ENOMEM; or the callback's own non-zero return. */
RT_MUSTCHECK int rt_zip_each(const void *data, size_t len, const rt_zip_limits *limits,
                             const char *glob, rt_zip_file_fn *fn, void *ctx, rt_zip_stats *stats,
                             char *errstr);

#endif
