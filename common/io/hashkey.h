/* SPDX-License-Identifier: MPL-2.0 */
/* hashkey.h - the process's SipHash key (common/core/siphash.h) for hash tables over
 * untrusted names: 128 random bits from the kernel (getrandom), drawn once, on first use.
 * Thread-safe. */
#ifndef RETRIG_COMMON_IO_HASHKEY_H
#define RETRIG_COMMON_IO_HASHKEY_H

#include "common/not_core.h"

#include "common/core/siphash.h"

/* The key, the same for the whole life of the process. If the kernel gives no randomness
 * (getrandom fails), the key mixes the time and the pid: weaker, but never constant. */
const rt_siphash_key *rt_hash_key(void);

#endif
