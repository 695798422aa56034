/*
 * test_kcache.c — host tests (no GPU) of the compiled-kernel disk cache (kcache.c) and its
 * SHA-256: main, the helpers the other files share (test_kcache.h), keys, hits, damaged entries,
 * unusable directories, eviction, concurrent writers, the directory's choice. The NVRTC loader
 * and compile step (nvrtc.c): test_kcache_nvrtc.c. The cache on a file system someone else can
 * change: test_kcache_safety.c. run_tests.sh builds the three with ASan + UBSan:
 *   test_kcache <stand-in libnvrtc path>
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "runtime/error.h"
#include "runtime/kcache.h"
#include "runtime/sha256.h"
#include "test_kcache.h"

int n_pass, n_fail;

char root[] = "/tmp/wf_kcache_XXXXXX"; /* everything this test writes */
const char *standin_lib;               /* argv[1] */

/* ---- helpers (test_kcache.h) ---- */

void set_cache(const char *sub) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", root, sub);
    setenv("WARPFFT_CACHE_DIR", dir, 1);
}

const char *cache_dir(void) {
    return getenv("WARPFFT_CACHE_DIR");
}

void key_of(const char *s, char key[65]) {
    unsigned char d[32];
    wf_sha256 c;
    wf_sha256_init(&c);
    wf_sha256_update(&c, s, strlen(s));
    wf_sha256_final(&c, d);
    wf_sha256_hex(d, key);
}

void entry_path(const char *key, char *out, size_t len) {
    snprintf(out, len, "%s/%s.wfk", cache_dir(), key);
}

/* An image of `size` bytes, filled from `seed`. */
wf_kimage image(int kind, size_t size, int seed) {
    wf_kimage img = {kind, malloc(size + 1), size};
    for (size_t i = 0; i < size; i++)
        img.data[i] = (unsigned char)(seed * 31 + (int)i * 7);
    img.data[size] = '\0';
    return img;
}

int same(const wf_kimage *a, const wf_kimage *b) {
    return a->kind == b->kind && a->size == b->size && memcmp(a->data, b->data, a->size) == 0 &&
           b->data[b->size] == '\0';
}

long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Counts the entries (*.wfk) and temp files (.tmp-*) in the cache directory. */
static void count_files(int *entries, int *temps) {
    *entries = *temps = 0;
    DIR *d = opendir(cache_dir());
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        *entries += n > 4 && strcmp(e->d_name + n - 4, ".wfk") == 0;
        *temps += strncmp(e->d_name, ".tmp-", 5) == 0;
    }
    if (d)
        closedir(d);
}

static void set_mtime(const char *path, time_t when) {
    struct timespec t[2] = {{when, 0}, {when, 0}};
    utimensat(AT_FDCWD, path, t, 0);
}

void note_has(const char *sub, int line) {
    char dir[PATH_MAX], note[512];
    wf_kcache_state(dir, sizeof dir, note, sizeof note);
    if (strstr(note, sub))
        check_pass();
    else
        check_fail(__FILE__, line, "note_has", "cache note has '%s'; it is '%s'", sub, note);
}

/* ---- SHA-256 ---- */

static void test_sha256(void) {
    static const struct {
        const char *in;
        const char *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
         "lmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char hex[65];
        key_of(v[i].in, hex);
        CHECK(strcmp(hex, v[i].hex) == 0);
    }
    /* A million 'a' fed in uneven pieces: the block boundary handling. */
    wf_sha256 c;
    unsigned char d[32], chunk[997];
    char hex[65];
    memset(chunk, 'a', sizeof chunk);
    wf_sha256_init(&c);
    size_t left = 1000000;
    for (size_t k = 1; left > 0; k = (k + 13) % 997 + 1) { /* 1..997 */
        size_t n = k < left ? k : left;
        wf_sha256_update(&c, chunk, n);
        left -= n;
    }
    wf_sha256_final(&c, d);
    wf_sha256_hex(d, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
}

/* Cache keys: parts are length-prefixed, so moving a boundary changes the key; NULL is "". */
static void kkey(const char *a, const char *b, char key[65]) {
    wf_kkey k;
    wf_kkey_init(&k, "test");
    wf_kkey_str(&k, a);
    wf_kkey_str(&k, b);
    wf_kkey_hex(&k, key);
}

static void test_kkey(void) {
    char k1[65], k2[65], k3[65], k4[65];
    kkey("ab", "c", k1);
    kkey("a", "bc", k2);
    kkey("ab", "c", k3);
    CHECK(strlen(k1) == 64 && strspn(k1, "0123456789abcdef") == 64);
    CHECK(strcmp(k1, k3) == 0); /* deterministic */
    CHECK(strcmp(k1, k2) != 0); /* the boundary counts */
    kkey(NULL, "x", k1);
    kkey("", "x", k2);
    CHECK(strcmp(k1, k2) == 0);
    /* fmt hashes what it prints */
    wf_kkey k;
    wf_kkey_init(&k, "test");
    wf_kkey_fmt(&k, "sm %d driver %d", 90, 13000);
    wf_kkey_hex(&k, k3);
    wf_kkey_init(&k, "test");
    wf_kkey_str(&k, "sm 90 driver 13000");
    wf_kkey_hex(&k, k4);
    CHECK(strcmp(k3, k4) == 0);
    /* another kind, another key */
    wf_kkey_init(&k, "other");
    wf_kkey_str(&k, "sm 90 driver 13000");
    wf_kkey_hex(&k, k1);
    CHECK(strcmp(k1, k4) != 0);
}

/* ---- the cache ---- */

static void test_hit_miss(void) {
    set_cache("hitmiss");
    char key[65], path[PATH_MAX + 80];
    key_of("hit-miss", key);
    wf_kimage got, img = image(WF_KIMAGE_CUBIN, 5000, 1);
    CHECK(wf_kcache_get(key, &got) == 0 && got.data == NULL);
    wf_kcache_put(key, &img);
    entry_path(key, path, sizeof path);
    CHECK(file_size(path) == 64 + 5000);
    struct stat st;
    CHECK(stat(cache_dir(), &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK(wf_kcache_get(key, &got) == 1 && same(&img, &got));
    wf_kimage_free(&got);
    CHECK(got.data == NULL && got.size == 0);
    /* A hit touches the entry (least-recently-used eviction). */
    set_mtime(path, 1000000);
    CHECK(wf_kcache_get(key, &got) == 1);
    wf_kimage_free(&got);
    CHECK(stat(path, &st) == 0 && st.st_mtime > 1000000);
    /* PTX keeps its kind; a second put of the same key replaces the entry. */
    wf_kimage ptx = image(WF_KIMAGE_PTX, 300, 2);
    wf_kcache_put(key, &ptx);
    CHECK(wf_kcache_get(key, &got) == 1 && same(&ptx, &got));
    wf_kimage_free(&got);
    /* Keys are 64 lowercase hex digits; anything else is neither read nor written. */
    wf_kcache_put("../../etc/passwd", &img);
    CHECK(wf_kcache_get("../../etc/passwd", &got) == 0);
    CHECK(wf_kcache_get("ABCDEF", &got) == 0);
    int entries, temps;
    count_files(&entries, &temps);
    CHECK(entries == 1 && temps == 0);
    wf_kcache_drop(key);
    CHECK(file_size(path) < 0);
    wf_kimage_free(&img);
    wf_kimage_free(&ptx);
}

/* Writes an entry, damages it with `damage`, and checks it is refused and removed. */
static void corrupt_case(const char *name, void (*damage)(const char *path), const char *why) {
    char key[65], path[PATH_MAX + 80];
    key_of(name, key);
    wf_kimage got, img = image(WF_KIMAGE_CUBIN, 2048, 3);
    wf_kcache_put(key, &img);
    entry_path(key, path, sizeof path);
    damage(path);
    CHECK(wf_kcache_get(key, &got) == 0 && got.data == NULL);
    CHECK(file_size(path) < 0); /* deleted, never loaded */
    note_has(why, __LINE__);
    wf_kcache_put(key, &img); /* rebuilt */
    CHECK(wf_kcache_get(key, &got) == 1 && same(&img, &got));
    wf_kimage_free(&got);
    wf_kimage_free(&img);
}

static void poke(const char *path, long off, const void *bytes, size_t n) {
    int fd = open(path, O_WRONLY);
    if (fd < 0 || pwrite(fd, bytes, n, off) != (ssize_t)n)
        printf("  (could not damage %s)\n", path);
    if (fd >= 0)
        close(fd);
}
static void flip_payload(const char *path) {
    unsigned char b = 0;
    int fd = open(path, O_RDWR);
    if (fd >= 0 && pread(fd, &b, 1, 64 + 1000) == 1) {
        b ^= 0x40;
        CHECK(pwrite(fd, &b, 1, 64 + 1000) == 1);
    }
    if (fd >= 0)
        close(fd);
}
static void truncate_it(const char *path) {
    CHECK(truncate(path, 64 + 2048 - 10) == 0);
}
static void truncate_header(const char *path) {
    CHECK(truncate(path, 20) == 0);
}
static void wrong_magic(const char *path) {
    poke(path, 0, "ELFCACHE", 8);
}
static void wrong_size(const char *path) {
    unsigned char big[8] = {0xff, 0xff, 0, 0, 0, 0, 0, 0};
    poke(path, 16, big, 8);
}
static void wrong_kind(const char *path) {
    unsigned char k[4] = {9, 0, 0, 0};
    poke(path, 12, k, 4);
}

static void test_corrupt(void) {
    set_cache("corrupt");
    corrupt_case("flip", flip_payload, "payload checksum mismatch");
    corrupt_case("truncated", truncate_it, "truncated");
    corrupt_case("header", truncate_header, "shorter than its header");
    corrupt_case("magic", wrong_magic, "wrong magic");
    corrupt_case("size", wrong_size, "size differs");
    corrupt_case("kind", wrong_kind, "unknown payload kind");
}

static void test_unusable_dir(void) {
    char key[65], file[256], dir[PATH_MAX];
    key_of("unusable", key);
    wf_kimage got, img = image(WF_KIMAGE_CUBIN, 100, 4);
    /* A path below a regular file: cannot be created (root included). */
    snprintf(file, sizeof file, "%s/a-file", root);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    snprintf(dir, sizeof dir, "%s/cache", file);
    setenv("WARPFFT_CACHE_DIR", dir, 1);
    wf_kcache_put(key, &img);
    CHECK(wf_kcache_get(key, &got) == 0);
    note_has("cache directory unusable: cannot create", __LINE__);
    note_has("kernels are compiled every time", __LINE__);
    /* A directory without write permission (root ignores it: skipped visibly). */
    set_cache("readonly");
    wf_kcache_put(key, &img); /* creates it */
    CHECK(chmod(cache_dir(), 0500) == 0);
    if (geteuid() == 0) {
        printf("  SKIP unwritable cache directory: running as root, which ignores mode 0500\n");
    } else {
        char key2[65];
        key_of("unusable-2", key2);
        wf_kcache_put(key2, &img);
        note_has("cannot write to the cache directory", __LINE__);
        CHECK(wf_kcache_get(key2, &got) == 0);
        /* An entry already there is still read. */
        CHECK(wf_kcache_get(key, &got) == 1 && same(&img, &got));
        wf_kimage_free(&got);
    }
    chmod(cache_dir(), 0700);
    /* Writable by other users (root included): not used, even for reading. */
    CHECK(chmod(cache_dir(), 0777) == 0);
    CHECK(wf_kcache_get(key, &got) == 0);
    note_has("readonly is writable by other users", __LINE__);
    chmod(cache_dir(), 0700);
    CHECK(wf_kcache_get(key, &got) == 1 && same(&img, &got));
    wf_kimage_free(&got);
    wf_kimage_free(&img);
}

static void test_eviction(void) {
    set_cache("evict");
    char key[6][65], path[6][PATH_MAX + 80];
    wf_kimage img = image(WF_KIMAGE_CUBIN, 1000 - 64, 5); /* 1000 bytes per entry */
    setenv("WARPFFT_CACHE_MAX_SIZE", "3500", 1);          /* room for three */
    for (int i = 0; i < 6; i++) {
        char name[24];
        snprintf(name, sizeof name, "evict-%d", i);
        key_of(name, key[i]);
        entry_path(key[i], path[i], sizeof path[i]);
    }
    for (int i = 0; i < 3; i++) {
        wf_kcache_put(key[i], &img);
        set_mtime(path[i], 1000000 + i * 100); /* 0 oldest */
    }
    wf_kimage got;
    CHECK(wf_kcache_get(key[0], &got) == 1); /* a hit makes 0 the most recent */
    wf_kimage_free(&got);
    wf_kcache_put(key[3], &img); /* four entries: the least recently used (1) goes */
    CHECK(file_size(path[0]) > 0 && file_size(path[1]) < 0 && file_size(path[2]) > 0 &&
          file_size(path[3]) > 0);
    set_mtime(path[3], 1000000); /* now the oldest */
    wf_kcache_put(key[4], &img); /* 3 goes */
    CHECK(file_size(path[3]) < 0 && file_size(path[4]) > 0);
    int entries, temps;
    count_files(&entries, &temps);
    CHECK(entries == 3 && temps == 0);
    /* An entry larger than the bound alone is not kept either. */
    setenv("WARPFFT_CACHE_MAX_SIZE", "500", 1);
    wf_kcache_put(key[5], &img);
    count_files(&entries, &temps);
    CHECK(entries == 0);
    /* A bound that is not a number: the default, and a note. */
    setenv("WARPFFT_CACHE_MAX_SIZE", "lots", 1);
    wf_kcache_put(key[5], &img);
    CHECK(file_size(path[5]) == 1000);
    note_has("WARPFFT_CACHE_MAX_SIZE=lots is not a number of bytes", __LINE__);
    unsetenv("WARPFFT_CACHE_MAX_SIZE");
    /* A temp file left by a writer that died: removed once it is an hour old. */
    char stale[PATH_MAX + 100], fresh[PATH_MAX + 100];
    snprintf(stale, sizeof stale, "%s/.tmp-%s-AbCdEf", cache_dir(), key[0]);
    snprintf(fresh, sizeof fresh, "%s/.tmp-%s-UvWxYz", cache_dir(), key[1]);
    fclose(fopen(stale, "w"));
    fclose(fopen(fresh, "w"));
    set_mtime(stale, time(NULL) - 7200);
    wf_kcache_put(key[4], &img);
    CHECK(file_size(stale) < 0 && file_size(fresh) == 0);
    unlink(fresh);
    wf_kimage_free(&img);
}

/* Several processes write the same key at once, many times: every read in between and the
 * final entry are whole, and no temp file is left. */
static void test_concurrent_writers(void) {
    set_cache("race");
    enum { PROCS = 4, ROUNDS = 150 };
    char key[65];
    key_of("race", key);
    wf_kimage img = image(WF_KIMAGE_CUBIN, 256 * 1024, 6);
    pid_t pid[PROCS];
    fflush(stdout);
    for (int p = 0; p < PROCS; p++) {
        pid[p] = fork();
        if (pid[p] == 0) {
            int bad = 0;
            for (int r = 0; r < ROUNDS; r++) {
                wf_kcache_put(key, &img);
                wf_kimage got;
                if (wf_kcache_get(key, &got)) { /* a miss is possible, a bad hit is not */
                    bad += !same(&img, &got);
                    wf_kimage_free(&got);
                }
            }
            _exit(bad ? 1 : 0);
        }
    }
    int ok = 1;
    for (int p = 0; p < PROCS; p++) {
        int ws = 0;
        waitpid(pid[p], &ws, 0);
        ok &= pid[p] > 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
    }
    CHECK(ok);
    wf_kimage got;
    CHECK(wf_kcache_get(key, &got) == 1 && same(&img, &got));
    wf_kimage_free(&got);
    int entries, temps;
    count_files(&entries, &temps);
    CHECK(entries == 1 && temps == 0);
    wf_kimage_free(&img);
}

static void test_dir_choice(void) {
    char xdg[256], home[256], want[PATH_MAX], dir[PATH_MAX], note[512];
    char key[65];
    key_of("dirs", key);
    wf_kimage got, img = image(WF_KIMAGE_PTX, 64, 7);
    snprintf(xdg, sizeof xdg, "%s/xdg", root);
    snprintf(home, sizeof home, "%s/home", root);
    setenv("XDG_CACHE_HOME", xdg, 1);
    setenv("HOME", home, 1);
    /* Set and empty: off. Nothing is written anywhere. */
    setenv("WARPFFT_CACHE_DIR", "", 1);
    wf_kcache_put(key, &img);
    CHECK(wf_kcache_get(key, &got) == 0);
    snprintf(want, sizeof want, "%s/warpfft", xdg);
    CHECK(access(want, F_OK) != 0);
    wf_kcache_state(dir, sizeof dir, note, sizeof note);
    CHECK(dir[0] == '\0' && strstr(note, "disabled (WARPFFT_CACHE_DIR is set and empty)"));
    /* $XDG_CACHE_HOME/warpfft, created 0700 (parents too). */
    unsetenv("WARPFFT_CACHE_DIR");
    wf_kcache_put(key, &img);
    struct stat st;
    CHECK(stat(want, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
    wf_kcache_state(dir, sizeof dir, note, sizeof note);
    CHECK(strcmp(dir, want) == 0);
    /* A relative XDG_CACHE_HOME is invalid (XDG spec): $HOME/.cache/warpfft. */
    setenv("XDG_CACHE_HOME", "relative/dir", 1);
    wf_kcache_put(key, &img);
    snprintf(want, sizeof want, "%s/.cache/warpfft", home);
    CHECK(stat(want, &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK(wf_kcache_get(key, &got) == 1 && same(&img, &got));
    wf_kimage_free(&got);
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    wf_kcache_state(dir, sizeof dir, note, sizeof note);
    CHECK(dir[0] == '\0' && strstr(note, "WARPFFT_CACHE_DIR, XDG_CACHE_HOME, HOME") != NULL);
    wf_kimage_free(&img);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_kcache <stand-in libnvrtc>\n");
        return 2;
    }
    standin_lib = argv[1];
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 2;
    }
    unsetenv("WARPFFT_CACHE_MAX_SIZE");
    test_sha256();
    test_kkey();
    test_hit_miss();
    test_corrupt();
    test_unusable_dir();
    test_eviction();
    test_concurrent_writers();
    test_kcache_safety();
    test_dir_choice();
    /* each in its own process: NVRTC stays loaded once found */
    run_isolated("nvrtc-missing", sc_nvrtc_missing);
    run_isolated("nvrtc-standin", sc_nvrtc_standin);
    run_isolated("nvrtc-real", sc_nvrtc_real);
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' && rm -r '%s'", root, root);
    if (system(cmd) != 0)
        printf("  (could not remove %s)\n", root);
    return check_summary("test_kcache: ");
}
