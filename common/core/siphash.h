/* SPDX-License-Identifier: MPL-2.0 */
/* siphash.h - SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF"), the
 * keyed hash of retrig's hash tables over untrusted names (errorsummary groups, test
 * history rows): without the key an input cannot be made of names that all land in one
 * bucket, so a look-up stays constant time whatever the artifact. The key is a parameter:
 * the core has no globals; common/io/hashkey.h gives a per-process random one. Pure and
 * thread-safe. */
#ifndef RETRIG_COMMON_CORE_SIPHASH_H
#define RETRIG_COMMON_CORE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct rt_siphash_key {
    uint64_t k0, k1; /* the 128-bit key, as two little-endian halves */
} rt_siphash_key;

/* SipHash-2-4 of len bytes of data under key. */
uint64_t rt_siphash(const rt_siphash_key *key, const void *data, size_t len);

#endif
