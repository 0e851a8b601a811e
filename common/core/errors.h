/* SPDX-License-Identifier: MPL-2.0 */
/* errors.h - retrig's error codes: 0 is success, failures are negative RT_E* values.
 * Handles keep a human-readable errstr beside the code; rt_strerror() names the code.
 * Thread-safe: rt_strerror returns static strings. */
#ifndef RETRIG_COMMON_ERRORS_H
#define RETRIG_COMMON_ERRORS_H

#define RT_MUSTCHECK         __attribute__((warn_unused_result))
#define RT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

#define RT_ERRSTR_SIZE 256

enum {
    RT_OK = 0,
    RT_ENOMEM = -1,     /* allocation failed */
    RT_EINVAL = -2,     /* invalid argument or value */
    RT_EPROTO = -3,     /* peer or input violated its protocol or schema */
    RT_EUPSTREAM = -4,  /* upstream service answered with an error */
    RT_ERETRY = -5,     /* transient: try again later (429, 5xx, not ready yet) */
    RT_ETIMEDOUT = -6,  /* an operation took longer than allowed */
    RT_ETOOBIG = -7,    /* input exceeded a configured size cap */
    RT_ECONN = -8,      /* connection failed or was lost */
    RT_EDB = -9,        /* database error */
    RT_ECONFIG = -10,   /* bad configuration */
    RT_ENOTFOUND = -11, /* the thing asked for does not exist */
    RT_EAUTH = -12,     /* authentication or authorisation refused */
    RT_EIO = -13,       /* local I/O error */
    RT_ECONFLICT = -14, /* state changed underneath (checksum mismatch, duplicate) */
    RT_ESTOPPED = -15,  /* given up because the process is stopping (SIGTERM) */
};

/* Short description of an RT_E* code ("out of memory"); never NULL. */
const char *rt_strerror(int err);

/* Formats into a handle's errstr buffer (RT_ERRSTR_SIZE bytes; NULL: nothing), cut at a
 * UTF-8 character boundary when it does not fit. */
void rt_set_errstr(char *errstr, const char *fmt, ...) RT_PRINTF(2, 3);

#endif
