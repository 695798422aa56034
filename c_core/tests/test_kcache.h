/*
 * test_kcache.h — what the kernel-cache test files share: test_kcache.c (main, SHA-256, keys,
 * hits, damaged entries, eviction) defines these helpers; test_kcache_safety.c (another user's
 * directory swapped in, FIFOs and symbolic links as entries, the size bound's parsing, deleting
 * a bad entry that was just replaced) and test_kcache_nvrtc.c (NVRTC's search and compile step)
 * use them and define the parts main runs.
 */
#ifndef WARPFFT_TEST_KCACHE_H
#define WARPFFT_TEST_KCACHE_H

#include <stddef.h>

#include "runtime/kcache.h"
#include "runtime/kimage.h"
#include "runtime/sha256.h"

extern char root[];             /* the temporary directory everything the test writes lives in */
extern const char *standin_lib; /* the stand-in libnvrtc (standin_nvrtc.c): main's argument */

/* WARPFFT_CACHE_DIR = <root>/<sub>; cache_dir() reads it back. */
void set_cache(const char *sub);
const char *cache_dir(void);
/* The SHA-256 of s in hex: a valid key. */
void key_of(const char *s, char key[65]);
/* <cache_dir()>/<key>.wfk */
void entry_path(const char *key, char *out, size_t len);
/* An image of `size` bytes filled from `seed`; `same` compares two (kind, size, bytes, NUL). */
wf_kimage image(int kind, size_t size, int seed);
int same(const wf_kimage *a, const wf_kimage *b);
long file_size(const char *path); /* -1 when there is none */
/* Checks that the cache's note (wf_kcache_state) contains sub; `line` is the caller's. */
void note_has(const char *sub, int line);

void test_kcache_safety(void); /* test_kcache_safety.c: all of its tests */
/* test_kcache_nvrtc.c: scenarios, each run in its own process (run_isolated). */
void sc_nvrtc_missing(void);
void sc_nvrtc_standin(void);
void sc_nvrtc_real(void);

#endif
