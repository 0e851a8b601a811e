/* SPDX-License-Identifier: MPL-2.0 */
/* hawk.h - Hawk request authentication (https://github.com/hueniverse/hawk, the scheme
 * Taskcluster APIs use) for an Authorization header.
 *
 * mac = base64(HMAC-SHA256(access token, "hawk.1.header\n{ts}\n{nonce}\n{METHOD}\n
 * {path?query}\n{host, lowercase}\n{port}\n{hash}\n{ext}\n")); the port is the URL's, else
 * 80 for http and 443 for https. With a payload, hash = base64(SHA256("hawk.1.payload\n
 * {content type without parameters, lowercase}\n{payload}\n")) is sent and signed. With
 * Taskcluster temporary credentials the certificate goes in ext, as Taskcluster's clients
 * do: base64(JSON {"certificate": <certificate object>}).
 * Pure apart from rt_hawk_nonce (OpenSSL's random generator); no clock: pass the time in.
 * Thread-safe. */
#ifndef RETRIG_COMMON_HAWK_H
#define RETRIG_COMMON_HAWK_H

#include <stddef.h>

#include "common/core/errors.h"

#define RT_HAWK_NONCE_SIZE 17 /* 16 characters of [A-Za-z0-9_-] and the NUL */
#define RT_HAWK_HASH_SIZE  45 /* base64 of a SHA-256, and the NUL */

typedef struct rt_hawk_credentials {
    const char *client_id;
    const char *access_token;
    const char *certificate; /* temporary credentials' certificate as JSON text, or NULL */
} rt_hawk_credentials;

/* The Authorization header value for a request, malloc'd into *out (sized from the inputs:
 * temporary credentials carry their certificate, several KB with many scopes):
 * Hawk id="...", ts="...", nonce="..."[, hash="..."][, ext="..."], mac="..."
 * payload NULL: no hash (content_type ignored). url: absolute http(s) URL as it is sent.
 * Returns RT_OK, RT_EINVAL (bad URL, a credential or nonce with characters a header value
 * cannot hold, a certificate that is not a JSON object), RT_ENOMEM. */
RT_MUSTCHECK int rt_hawk_header(const rt_hawk_credentials *creds, const char *method,
                                const char *url, const char *payload, const char *content_type,
                                long now_seconds, const char *nonce, char **out);

/* The same with an explicit ext (NULL or "" for none) instead of the certificate's, into
 * out (size bytes); RT_ETOOBIG when it does not fit. */
RT_MUSTCHECK int rt_hawk_header_ext(const char *id, const char *key, const char *method,
                                    const char *url, const char *payload, size_t payload_len,
                                    const char *content_type, long now_seconds, const char *nonce,
                                    const char *ext, char *out, size_t size);

/* base64(SHA256("hawk.1.payload\n{mime}\n{payload}\n")) into out. */
RT_MUSTCHECK int rt_hawk_payload_hash(const char *content_type, const char *payload, size_t len,
                                      char out[RT_HAWK_HASH_SIZE]);

/* 16 random URL-safe characters from OpenSSL's RAND_bytes; RT_EIO when it fails. */
RT_MUSTCHECK int rt_hawk_nonce(char out[RT_HAWK_NONCE_SIZE]);

#endif
