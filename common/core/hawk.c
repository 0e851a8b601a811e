/* SPDX-License-Identifier: MPL-2.0 */
/* hawk.c - Hawk Authorization headers (HMAC-SHA256) for Taskcluster requests. */
#include "common/core/hawk.h"

#include <ctype.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HOST 256

/* A header attribute value: printable ASCII without '"' and '\' (as hawk checks). */
static bool header_safe(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\\')
            return false;
    return true;
}

typedef struct url_parts {
    char host[MAX_HOST];
    long port;
    const char *resource; /* path and query, without the fragment */
    size_t resource_len;
} url_parts;

static int parse_url(const char *url, url_parts *u)
{
    const char *p;
    long default_port;
    if (strncasecmp(url, "http://", 7) == 0) {
        p = url + 7;
        default_port = 80;
    } else if (strncasecmp(url, "https://", 8) == 0) {
        p = url + 8;
        default_port = 443;
    } else {
        return RT_EINVAL;
    }
    size_t authority = strcspn(p, "/?#");
    const char *end = p + authority;
    const char *at = memchr(p, '@', authority);
    if (at) p = at + 1; /* user information is not part of the host */
    const char *host_end = end;
    if (*p == '[') { /* IPv6 literal */
        const char *close = memchr(p, ']', (size_t)(end - p));
        if (!close) return RT_EINVAL;
        host_end = close + 1;
    } else {
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (colon) host_end = colon;
    }
    size_t host_len = (size_t)(host_end - p);
    if (host_len == 0 || host_len >= sizeof u->host) return RT_EINVAL;
    for (size_t i = 0; i < host_len; i++) u->host[i] = (char)tolower((unsigned char)p[i]);
    u->host[host_len] = '\0';
    u->port = default_port;
    if (host_end < end) {
        if (*host_end != ':' || host_end + 1 == end) return RT_EINVAL;
        long port = 0;
        for (const char *c = host_end + 1; c < end; c++) {
            if (*c < '0' || *c > '9') return RT_EINVAL;
            port = port * 10 + (*c - '0');
            if (port > 65535) return RT_EINVAL;
        }
        u->port = port;
    }
    u->resource = end;
    u->resource_len = strcspn(end, "#");
    return RT_OK;
}

static void base64(const unsigned char *data, size_t len, char *out)
{
    EVP_EncodeBlock((unsigned char *)out, data, (int)len);
}

int rt_hawk_payload_hash(const char *content_type, const char *payload, size_t len,
                         char out[RT_HAWK_HASH_SIZE])
{
    char mime[256];
    size_t n = 0;
    const char *ct = content_type ? content_type : "";
    while (*ct == ' ') ct++;
    for (; ct[n] && ct[n] != ';' && n < sizeof mime - 1; n++)
        mime[n] = (char)tolower((unsigned char)ct[n]);
    while (n > 0 && mime[n - 1] == ' ') n--;
    mime[n] = '\0';

    unsigned char digest[SHA256_DIGEST_LENGTH];
    unsigned int digest_len = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md) return RT_ENOMEM;
    int ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL) &&
             EVP_DigestUpdate(md, "hawk.1.payload\n", 15) && EVP_DigestUpdate(md, mime, n) &&
             EVP_DigestUpdate(md, "\n", 1) && EVP_DigestUpdate(md, payload ? payload : "", len) &&
             EVP_DigestUpdate(md, "\n", 1) && EVP_DigestFinal_ex(md, digest, &digest_len);
    EVP_MD_CTX_free(md);
    if (!ok) return RT_ENOMEM;
    base64(digest, digest_len, out);
    return RT_OK;
}

int rt_hawk_header_ext(const char *id, const char *key, const char *method, const char *url,
                       const char *payload, size_t payload_len, const char *content_type,
                       long now_seconds, const char *nonce, const char *ext, char *out, size_t size)
{
    url_parts u;
    int rc;
    if (!id || !key || !method || !url || !nonce || !*id || !*nonce || !header_safe(id) ||
        !header_safe(nonce) || (ext && !header_safe(ext)) || !header_safe(method))
        return RT_EINVAL;
    if ((rc = parse_url(url, &u))) return rc;
    if (!ext) ext = "";
    char hash[RT_HAWK_HASH_SIZE] = "";
    if (payload && (rc = rt_hawk_payload_hash(content_type, payload, payload_len, hash))) return rc;

    char method_upper[16];
    size_t m = strlen(method);
    if (m == 0 || m >= sizeof method_upper) return RT_EINVAL;
    for (size_t i = 0; i <= m; i++) method_upper[i] = (char)toupper((unsigned char)method[i]);

    /* The normalized string can be long (the query and the certificate): size it. */
    const char *resource = u.resource_len ? u.resource : "/";
    int resource_len = u.resource_len ? (int)u.resource_len : 1;
    int length =
        snprintf(NULL, 0, "hawk.1.header\n%ld\n%s\n%s\n%.*s\n%s\n%ld\n%s\n%s\n", now_seconds, nonce,
                 method_upper, resource_len, resource, u.host, u.port, hash, ext);
    char *normalized = malloc((size_t)length + 1);
    if (!normalized) return RT_ENOMEM;
    snprintf(normalized, (size_t)length + 1, "hawk.1.header\n%ld\n%s\n%s\n%.*s\n%s\n%ld\n%s\n%s\n",
             now_seconds, nonce, method_upper, resource_len, resource, u.host, u.port, hash, ext);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    unsigned char *done = HMAC(EVP_sha256(), key, (int)strlen(key), (unsigned char *)normalized,
                               (size_t)length, mac, &mac_len);
    free(normalized);
    if (!done) return RT_ENOMEM;
    char mac64[RT_HAWK_HASH_SIZE];
    base64(mac, mac_len, mac64);

    int n = snprintf(out, size, "Hawk id=\"%s\", ts=\"%ld\", nonce=\"%s\"%s%s%s%s%s%s, mac=\"%s\"",
                     id, now_seconds, nonce, hash[0] ? ", hash=\"" : "", hash, hash[0] ? "\"" : "",
                     ext[0] ? ", ext=\"" : "", ext, ext[0] ? "\"" : "", mac64);
    if (n < 0 || (size_t)n >= size) return RT_ETOOBIG;
    return RT_OK;
}

/* ext for temporary credentials: base64 of {"certificate": <the certificate object>}. */
static int certificate_ext(const char *certificate, char **out)
{
    json_error_t error;
    int rc = RT_EINVAL;
    char *text = NULL;
    json_t *cert = json_loads(certificate, 0, &error), *ext = NULL;
    *out = NULL;
    if (!json_is_object(cert)) goto out;
    rc = RT_ENOMEM;
    if (!(ext = json_object()) || json_object_set(ext, "certificate", cert) ||
        !(text = json_dumps(ext, JSON_COMPACT)))
        goto out;
    size_t len = strlen(text);
    if (!(*out = malloc(4 * ((len + 2) / 3) + 1))) goto out;
    base64((const unsigned char *)text, len, *out);
    rc = RT_OK;
out:
    free(text);
    json_decref(ext);
    json_decref(cert);
    return rc;
}

int rt_hawk_header(const rt_hawk_credentials *creds, const char *method, const char *url,
                   const char *payload, const char *content_type, long now_seconds,
                   const char *nonce, char **out)
{
    char *ext = NULL, *header = NULL;
    int rc;
    *out = NULL;
    if (!creds || !creds->client_id || !creds->access_token || !nonce) return RT_EINVAL;
    if (creds->certificate && creds->certificate[0] &&
        (rc = certificate_ext(creds->certificate, &ext)))
        return rc;
    /* Sized from the inputs: the fixed text, ts, hash and mac are under 256 bytes. */
    size_t size = strlen(creds->client_id) + strlen(nonce) + (ext ? strlen(ext) : 0) + 256;
    if (!(header = malloc(size))) {
        free(ext);
        return RT_ENOMEM;
    }
    rc = rt_hawk_header_ext(creds->client_id, creds->access_token, method, url, payload,
                            payload ? strlen(payload) : 0, content_type, now_seconds, nonce, ext,
                            header, size);
    free(ext);
    if (rc == RT_OK)
        *out = header;
    else
        free(header);
    return rc;
}

int rt_hawk_nonce(char out[RT_HAWK_NONCE_SIZE])
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    unsigned char bytes[RT_HAWK_NONCE_SIZE - 1];
    if (RAND_bytes(bytes, (int)sizeof bytes) != 1) return RT_EIO;
    for (size_t i = 0; i < sizeof bytes; i++) out[i] = alphabet[bytes[i] & 63];
    out[sizeof bytes] = '\0';
    return RT_OK;
}
