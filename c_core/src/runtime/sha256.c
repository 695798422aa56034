/*
 * sha256.c — SHA-256 (FIPS 180-4), for the kernel cache's entry checksums (kcache.c), and the
 * cache keys built from it (wf_kkey: length-prefixed parts, so every loader that caches forms
 * its keys one way).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/sha256.h"

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t wf_sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) {
    return (x >> n) | (x << (32 - n));
}

static void sha_block(uint32_t h[8], const unsigned char *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + wf_sha_k[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
}

void wf_sha256_init(wf_sha256 *c) {
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->bytes = 0;
    c->fill = 0;
}

void wf_sha256_update(wf_sha256 *c, const void *data, size_t len) {
    const unsigned char *p = data;
    c->bytes += len;
    while (len > 0) {
        if (c->fill == 0 && len >= 64) {
            sha_block(c->h, p);
            p += 64;
            len -= 64;
            continue;
        }
        size_t k = 64 - c->fill < len ? 64 - c->fill : len;
        memcpy(c->buf + c->fill, p, k);
        c->fill += k;
        p += k;
        len -= k;
        if (c->fill == 64) {
            sha_block(c->h, c->buf);
            c->fill = 0;
        }
    }
}

void wf_sha256_final(wf_sha256 *c, unsigned char out[32]) {
    uint64_t bits = c->bytes * 8;
    unsigned char pad[72] = {0x80};
    size_t n = (c->fill < 56 ? 56 : 120) - c->fill;
    for (int i = 0; i < 8; i++)
        pad[n + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    wf_sha256_update(c, pad, n + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (unsigned char)(c->h[i] >> (24 - 8 * j));
}

void wf_sha256_hex(const unsigned char digest[32], char hex[65]) {
    static const char x[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = x[digest[i] >> 4];
        hex[2 * i + 1] = x[digest[i] & 15];
    }
    hex[64] = '\0';
}

void wf_kkey_init(wf_kkey *k, const char *kind) {
    wf_sha256_init(&k->c);
    wf_kkey_str(k, kind);
}

void wf_kkey_add(wf_kkey *k, const void *p, size_t n) {
    uint64_t len = n;
    wf_sha256_update(&k->c, &len, sizeof len);
    wf_sha256_update(&k->c, p, n);
}

void wf_kkey_str(wf_kkey *k, const char *s) {
    wf_kkey_add(k, s ? s : "", s ? strlen(s) : 0);
}

void wf_kkey_fmt(wf_kkey *k, const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    wf_kkey_add(k, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

void wf_kkey_hex(wf_kkey *k, char key[65]) {
    unsigned char digest[32];
    wf_sha256_final(&k->c, digest);
    wf_sha256_hex(digest, key);
}
