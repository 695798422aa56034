/*
 * sha256.h — SHA-256, and the keys of the kernel disk cache formed from it (sha256.c).
 */
#ifndef WARPFFT_RUNTIME_SHA256_H
#define WARPFFT_RUNTIME_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* SHA-256. */
typedef struct wf_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char buf[64];
    size_t fill;
} wf_sha256;
void wf_sha256_init(wf_sha256 *c);
void wf_sha256_update(wf_sha256 *c, const void *data, size_t len);
void wf_sha256_final(wf_sha256 *c, unsigned char out[32]);
/* Lowercase hex of a digest: 64 characters and a NUL. */
void wf_sha256_hex(const unsigned char digest[32], char hex[65]);

/* A cache key: the SHA-256 of its parts, each hashed after its length (no two part lists hash
 * alike by moving a boundary), as 64 hex digits. Used by every loader that caches
 * (module_ptx.c, module_nvrtc.c), so their keys are formed one way. */
typedef struct wf_kkey {
    wf_sha256 c;
} wf_kkey;
void wf_kkey_init(wf_kkey *k, const char *kind); /* kind: the first part, names the loader */
void wf_kkey_add(wf_kkey *k, const void *p, size_t n);
void wf_kkey_str(wf_kkey *k, const char *s); /* NULL counts as "" */
void wf_kkey_fmt(wf_kkey *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wf_kkey_hex(wf_kkey *k, char key[65]);

#endif /* WARPFFT_RUNTIME_SHA256_H */
