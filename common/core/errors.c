/* SPDX-License-Identifier: MPL-2.0 */
/* errors.c - names for RT_E* codes and the errstr helper. */
#include "common/core/errors.h"

#include <stdarg.h>
#include <stdio.h>

#include "common/core/utf8.h"

const char *rt_strerror(int err)
{
    switch (err) {
    case RT_OK: return "success";
    case RT_ENOMEM: return "out of memory";
    case RT_EINVAL: return "invalid argument";
    case RT_EPROTO: return "protocol or schema violation";
    case RT_EUPSTREAM: return "upstream error";
    case RT_ERETRY: return "temporary failure, retry later";
    case RT_ETIMEDOUT: return "timed out";
    case RT_ETOOBIG: return "too big";
    case RT_ECONN: return "connection failed";
    case RT_EDB: return "database error";
    case RT_ECONFIG: return "configuration error";
    case RT_ENOTFOUND: return "not found";
    case RT_EAUTH: return "authentication refused";
    case RT_EIO: return "input/output error";
    case RT_ECONFLICT: return "conflict";
    case RT_ESTOPPED: return "stopping";
    default: return "unknown error";
    }
}

void rt_set_errstr(char *errstr, const char *fmt, ...)
{
    if (!errstr) return;
    va_list ap;
    va_start(ap, fmt);
    rt_utf8_vformat(errstr, RT_ERRSTR_SIZE, fmt, ap); /* a cut never splits a character */
    va_end(ap);
}
