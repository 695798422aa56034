/*
 * fuzz_reader.h — the fuzzer's input read front to back as a stream of choices, shared by the
 * targets that decode their input that way (fuzz_abi.c, fuzz_xla_frame.c): each keeps its own
 * pick_* choices on top, since what they choose differs.
 */
#ifndef WARPFFT_FUZZ_READER_H
#define WARPFFT_FUZZ_READER_H

#include <stddef.h>
#include <stdint.h>

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

#endif
