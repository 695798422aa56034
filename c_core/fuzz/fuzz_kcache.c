/*
 * fuzz_kcache.c — libFuzzer target: the kernel disk cache's entry reader (kcache.c). The input
 * is written as the entry file <dir>/<key>.wfk and loaded with wf_kcache_get, as a process
 * finding it in its cache would. An independent reading of the format (64-byte header: magic
 * "WFKCACHE", format 1, kind CUBIN or PTX, payload size = file size - 64 and at most 1 GiB,
 * SHA-256 of the payload) decides what must happen: a valid entry is loaded byte for byte (with
 * the NUL after it) and stays; anything else is a miss and the file is gone. An input starting
 * with "MAXSIZE:" instead sets WARPFFT_CACHE_MAX_SIZE to the rest and stores a 1000-byte entry:
 * kept exactly when the rest is decimal digits for a number >= 1000 (" -1" once meant no bound),
 * with a note when it is not a number. Any other outcome aborts (a crash for libFuzzer), as do
 * the sanitizers. c_core/fuzz/run.sh builds and runs it; corpus/fuzz_kcache holds the seeds.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/kcache.h"
#include "runtime/kimage.h"
#include "runtime/sha256.h"

static char dir[PATH_MAX], key[65], path[PATH_MAX + 80];

static void fail(const char *what, size_t size) {
    fprintf(stderr, "fuzz_kcache: %s (input of %zu bytes)\n", what, size);
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/wf_fuzz_kcache_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("fuzz_kcache: mkdtemp");
        exit(1);
    }
    setenv("WARPFFT_CACHE_DIR", dir, 1);
    memset(key, 'a', 64);
    key[64] = '\0';
    snprintf(path, sizeof path, "%s/%s.wfk", dir, key);
    return 0;
}

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The format, read independently of kcache.c: 1 when data is a valid entry. */
static int valid_entry(const uint8_t *data, size_t size) {
    if (size < 64 || memcmp(data, "WFKCACHE", 8) != 0 || le(data + 8, 4) != 1)
        return 0;
    uint64_t kind = le(data + 12, 4), n = le(data + 16, 8);
    if ((kind != WF_KIMAGE_CUBIN && kind != WF_KIMAGE_PTX) || n == 0 || n > ((uint64_t)1 << 30) ||
        n != size - 64)
        return 0;
    unsigned char sum[32];
    wf_sha256 c;
    wf_sha256_init(&c);
    wf_sha256_update(&c, data + 64, size - 64);
    wf_sha256_final(&c, sum);
    return memcmp(sum, data + 24, 32) == 0;
}

static void write_file(const char *p, const uint8_t *data, size_t size) {
    FILE *f = fopen(p, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        fail("cannot write the entry file", size);
}

static void entry_reader(const uint8_t *data, size_t size) {
    write_file(path, data, size);
    int valid = valid_entry(data, size);
    wf_kimage img;
    int hit = wf_kcache_get(key, &img);
    struct stat st;
    int there = stat(path, &st) == 0;
    if (hit != valid)
        fail(valid ? "a valid entry was not loaded" : "an invalid entry was loaded", size);
    if (hit && (img.kind != (int)le(data + 12, 4) || img.size != size - 64 ||
                memcmp(img.data, data + 64, img.size) != 0 || img.data[img.size] != '\0'))
        fail("the loaded image differs from the entry's payload", size);
    if (there != valid)
        fail(valid ? "a valid entry was deleted" : "an invalid entry was left in place", size);
    wf_kimage_free(&img);
}

/* "MAXSIZE:<s>": the bound is s when s is decimal digits (no overflow), else the default with a
 * note; a 1000-byte entry is kept exactly when the bound is at least 1000. */
static void max_size(const uint8_t *data, size_t size) {
    char s[64];
    size_t n = size - 8 < sizeof s - 1 ? size - 8 : sizeof s - 1;
    memcpy(s, data + 8, n);
    s[n] = '\0';
    if (n == 0 || strlen(s) != n) /* empty means the default; a NUL cannot be in the env */
        return;
    int digits = 1;
    unsigned long long v = 0;
    for (size_t i = 0; i < n && digits; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        digits = d <= 9 && v <= (ULLONG_MAX - d) / 10;
        v = 10 * v + d;
    }
    unsigned long long bound = digits ? v : (unsigned long long)256 << 20;
    setenv("WARPFFT_CACHE_MAX_SIZE", s, 1);
    unlink(path);
    unsigned char payload[1000 - 64];
    memset(payload, 0x5a, sizeof payload);
    wf_kimage img = {WF_KIMAGE_PTX, payload, sizeof payload};
    wf_kcache_put(key, &img);
    unsetenv("WARPFFT_CACHE_MAX_SIZE");
    struct stat st;
    int kept = stat(path, &st) == 0;
    if (kept != (bound >= 1000))
        fail(kept ? "an entry above the bound was kept" : "an entry within the bound was evicted",
             size);
    char d[PATH_MAX], note[512];
    wf_kcache_state(d, sizeof d, note, sizeof note);
    if (!digits && !strstr(note, "is not a number of bytes"))
        fail("a WARPFFT_CACHE_MAX_SIZE that is not a number was taken without a note", size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size >= 8 && memcmp(data, "MAXSIZE:", 8) == 0)
        max_size(data, size);
    else
        entry_reader(data, size);
    return 0;
}
