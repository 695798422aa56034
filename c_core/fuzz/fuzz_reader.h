/*
 * fuzz_reader.h — the fuzzer's input read front to back as a stream of choices, shared by the
 * targets that decode their input that way (fuzz_abi.c, fuzz_xla_frame.c): the byte reader and
 * the two choice shapes (an integer, a double); each target keeps its own tables and ranges,
 * since what they choose differs. The encoding is the corpora's: change it only with their seeds.
 */
#ifndef WARPFFT_FUZZ_READER_H
#define WARPFFT_FUZZ_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

/* The next `bytes` bytes as a little-endian integer (zeros once the input runs out). */
static inline uint64_t take(reader *r, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) {
        uint64_t b = r->n ? (r->n--, *r->p++) : 0;
        v |= b << (8 * i);
    }
    return v;
}

/* An integer: one byte b; b < n_small gives b % mod_small, b < 250 an entry of edge (b % n_edge),
 * else the next 8 bytes as any 64 bits. */
static inline int64_t take_int(reader *r, int n_small, int mod_small, const int64_t *edge,
                               size_t n_edge) {
    uint8_t b = (uint8_t)take(r, 1);
    if (b < n_small)
        return b % mod_small;
    if (b < 250)
        return edge[b % n_edge];
    return (int64_t)take(r, 8);
}

/* A double: one byte b; b < 240 gives an entry of v (b % n_v), else the next 8 bytes' bits. */
static inline double take_double(reader *r, const double *v, size_t n_v) {
    uint8_t b = (uint8_t)take(r, 1);
    if (b < 240)
        return v[b % n_v];
    uint64_t bits = take(r, 8);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

#endif
