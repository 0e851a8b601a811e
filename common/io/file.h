/* SPDX-License-Identifier: MPL-2.0 */
/* file.h - reading a whole file into memory, bounded: the one way the commands and the
 * configuration read a file given to them. Thread-safe. */
#ifndef RETRIG_COMMON_IO_FILE_H
#define RETRIG_COMMON_IO_FILE_H

#include "common/not_core.h"

#include <stddef.h>

#include "common/core/errors.h"

/* Reads path ("-": standard input) into a malloc'd, NUL-terminated buffer of *len bytes.
 * RT_EIO with errstr naming the file and the system's reason, RT_ETOOBIG when it holds more
 * than max bytes (nothing is kept), RT_ENOMEM. */
RT_MUSTCHECK int rt_file_read(const char *path, size_t max, char **out, size_t *len, char *errstr);

#endif
