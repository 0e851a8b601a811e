/* SPDX-License-Identifier: MPL-2.0 */
/* siphash.c - SipHash-2-4: two compression rounds per 8-byte block, four finalisation
 * rounds, over a 256-bit state initialised from the key and the four constants of the
 * paper. */
#include "common/core/siphash.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

typedef struct state {
    uint64_t v0, v1, v2, v3;
} state;

static void rounds(state *s, int n)
{
    for (int i = 0; i < n; i++) {
        s->v0 += s->v1;
        s->v1 = ROTL(s->v1, 13) ^ s->v0;
        s->v0 = ROTL(s->v0, 32);
        s->v2 += s->v3;
        s->v3 = ROTL(s->v3, 16) ^ s->v2;
        s->v0 += s->v3;
        s->v3 = ROTL(s->v3, 21) ^ s->v0;
        s->v2 += s->v1;
        s->v1 = ROTL(s->v1, 17) ^ s->v2;
        s->v2 = ROTL(s->v2, 32);
    }
}

/* Little-endian load of n (<= 8) bytes. */
static uint64_t load(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint64_t rt_siphash(const rt_siphash_key *key, const void *data, size_t len)
{
    const unsigned char *p = data;
    state s = {key->k0 ^ 0x736f6d6570736575ULL, key->k1 ^ 0x646f72616e646f6dULL,
               key->k0 ^ 0x6c7967656e657261ULL, key->k1 ^ 0x7465646279746573ULL};
    size_t whole = len & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load(p + i, 8);
        s.v3 ^= m;
        rounds(&s, 2);
        s.v0 ^= m;
    }
    uint64_t last = ((uint64_t)len << 56) | load(p + whole, len - whole);
    s.v3 ^= last;
    rounds(&s, 2);
    s.v0 ^= last;
    s.v2 ^= 0xff;
    rounds(&s, 4);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
