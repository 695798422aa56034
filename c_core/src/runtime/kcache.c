/*
 * kcache.c — the disk cache of compiled kernels (NVRTC's images and the driver-linked PTX of a
 * `jit` build); its keys and checksums are SHA-256 (sha256.c).
 *
 * An entry is one file <dir>/<key>.wfk: a 64-byte header (magic "WFKCACHE", format version,
 * payload kind, payload size, SHA-256 of the payload) and the payload (a CUBIN or PTX). The key
 * (module_ptx.c, module_nvrtc.c: wf_kkey) hashes everything the payload depends on, so an entry is
 * never updated in place: it is written to a unique temp file in the same directory and renamed
 * over the entry, which is atomic, so several processes may write the same key at once and a reader
 * sees either no entry or a whole one. Every read is verified in full; an entry that fails
 * (truncated, bytes flipped, another file) is deleted and the kernel compiled again, never loaded.
 *
 * The directory is bounded: after each write, the least-recently-used entries (by mtime, which
 * a hit touches) are deleted until the entries total at most $WARPFFT_CACHE_MAX_SIZE bytes
 * (decimal digits only; anything else is noted and the default used).
 *
 * The entries are code this process runs, and SHA-256 is integrity, not authentication: a
 * directory that another user could write (owned by someone else, or group/world-writable) is
 * not used. That check is made on the directory as opened — once per call, with O_NOFOLLOW (the
 * directory itself may not be a symbolic link; its ancestors may) — and every entry is then
 * opened, created, renamed and deleted relative to that descriptor (openat, renameat,
 * unlinkat), never by path again: whoever can write an ancestor may swap the path for their own
 * directory at any moment, but not the directory already checked and open. Entries are opened
 * with O_NOFOLLOW | O_NONBLOCK and must be regular files (a symbolic link is not followed, a FIFO
 * does not block); others are deleted as invalid. A bad entry is deleted only if it is still the
 * file that was read: it is renamed aside first and compared (device, inode), and renamed back
 * when another process had just renamed a new entry over it.
 *
 * Nothing here fails a plan: a directory that cannot be created, written or used is recorded
 * (for warpfft_runtime_info) and the kernels compiled every time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/error.h"
#include "runtime/kcache.h"
#include "runtime/libfind.h"
#include "runtime/sha256.h"

/* ---- state for warpfft_runtime_info ---- */

static pthread_mutex_t wf_kc_lock = PTHREAD_MUTEX_INITIALIZER;
static char wf_kc_note[512]; /* the last problem met; guarded by wf_kc_lock */

static void atfork_child(void) {
    pthread_mutex_init(&wf_kc_lock, NULL);
}

/* Registered at load: a fork() while another thread holds the lock leaves it held in the child
 * (loader.c says what a child may still do). */
__attribute__((constructor)) static void register_atfork(void) {
    pthread_atfork(NULL, NULL, atfork_child);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...) {
    char tmp[sizeof wf_kc_note];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&wf_kc_lock);
    memcpy(wf_kc_note, tmp, sizeof tmp);
    pthread_mutex_unlock(&wf_kc_lock);
}

/* ---- the directory ---- */

#define WF_KC_DEFAULT_MAX ((unsigned long long)256 << 20)

/* The directory's name: 1, or 0 with `why` when the cache is off. */
static int dir_name(char *dir, size_t len, char *why, size_t why_len) {
    const char *env = wf_getenv("WARPFFT_CACHE_DIR");
    int n = -1;
    if (env && !env[0]) {
        snprintf(why, why_len, "disabled (WARPFFT_CACHE_DIR is set and empty)");
        return 0;
    }
    const char *xdg = wf_getenv("XDG_CACHE_HOME"), *home = wf_getenv("HOME");
    if (env)
        n = snprintf(dir, len, "%s", env);
    else if (xdg && xdg[0] == '/') /* the XDG spec: a relative value is invalid, ignore it */
        n = snprintf(dir, len, "%s/warpfft", xdg);
    else if (home && home[0])
        n = snprintf(dir, len, "%s/.cache/warpfft", home);
    else {
        snprintf(why, why_len, "no directory: none of WARPFFT_CACHE_DIR, XDG_CACHE_HOME, HOME set");
        return 0;
    }
    if (n < 0 || (size_t)n >= len) {
        snprintf(why, why_len, "no directory: the path is too long");
        return 0;
    }
    while (n > 1 && dir[n - 1] == '/') /* "d/" would follow d when it is a symbolic link */
        dir[--n] = '\0';
    return 1;
}

/* mkdir -p, the directories it creates with mode 0700 (the cache holds code this process will
 * run: other users must not write it). 1 when `dir` is a directory afterwards. */
static int mkdirs(const char *dir, char *why, size_t why_len) {
    char p[PATH_MAX];
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 1;
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return 0;
    for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
        if (s)
            *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            snprintf(why, why_len, "cannot create %.300s (%s)", p, strerror(errno));
            return 0;
        }
        if (!s)
            break;
        *s = '/';
        while (s[1] == '/')
            s++;
        if (!s[1])
            break;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, why_len, "%.300s is not a directory", dir);
        return 0;
    }
    return 1;
}

/* The directory, created if needed, opened (O_NOFOLLOW) and checked as opened: its descriptor,
 * or -1 (recorded) when there is none to use. Every use of the directory goes through it. */
static int dir_open(char *dir, size_t len) {
    char why[400] = "";
    if (!dir_name(dir, len, why, sizeof why))
        return -1; /* off: nothing to record, runtime_info says it */
    if (!mkdirs(dir, why, sizeof why)) {
        note("cache directory unusable: %s; kernels are compiled every time", why);
        return -1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err = errno;
    struct stat st;
    const char *bad = NULL;
    if (dfd < 0) /* O_DIRECTORY | O_NOFOLLOW on a symbolic link: ENOTDIR */
        bad = lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) ? "a symbolic link" : strerror(err);
    else if (fstat(dfd, &st) != 0)
        bad = strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        bad = "not a directory";
    else if (st.st_uid != geteuid())
        bad = "owned by another user";
    else if ((st.st_mode & 022) != 0)
        bad = "writable by other users";
    if (bad) {
        note("cache directory unusable: %.300s is %s; kernels are compiled every time", dir, bad);
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    return dfd;
}

static int key_ok(const char *key) {
    size_t n = 0;
    for (; key && key[n]; n++)
        if (!((key[n] >= '0' && key[n] <= '9') || (key[n] >= 'a' && key[n] <= 'f')))
            return 0;
    return n == 64;
}

/* Entry and temp file names within the directory. */
enum { WF_KC_NAME = 80 };

static void entry_name(char name[WF_KC_NAME], const char *key) {
    snprintf(name, WF_KC_NAME, "%s.wfk", key);
}

/* Creates a new, empty temp file .tmp-<key>-XXXXXX (mode 0600) in the directory: its descriptor
 * and name in tmp, or -1 with errno. The name is random and O_EXCL makes it unique (mkstemp
 * works by path; this works on the directory's descriptor). */
static int make_temp(int dfd, const char *key, char tmp[WF_KC_NAME]) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static _Atomic uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 40) ^
                 (uint64_t)(uintptr_t)&ts;
    for (int attempt = 0; attempt < 100; attempt++) {
        uint64_t z = x + 0x9e3779b97f4a7c15ULL * ++counter; /* splitmix64 */
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        char r[7];
        for (int i = 0; i < 6; i++, z /= 62)
            r[i] = abc[z % 62];
        r[6] = '\0';
        snprintf(tmp, WF_KC_NAME, ".tmp-%s-%s", key, r);
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1; /* errno EEXIST */
}

/* ---- entries ---- */

enum { WF_KC_HEADER = 64, WF_KC_FORMAT = 1 };
static const char wf_kc_magic[8] = {'W', 'F', 'K', 'C', 'A', 'C', 'H', 'E'};
/* A sanity bound on a payload: our modules' images are a few MB. */
#define WF_KC_MAX_PAYLOAD ((uint64_t)1 << 30)

static void put_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Header: +0 magic, +8 u32 format, +12 u32 kind, +16 u64 payload size, +24 SHA-256 of the
 * payload, +56 8 zero bytes; little-endian. */
static void header(unsigned char h[WF_KC_HEADER], const wf_kimage *img) {
    memset(h, 0, WF_KC_HEADER);
    memcpy(h, wf_kc_magic, 8);
    put_u32(h + 8, WF_KC_FORMAT);
    put_u32(h + 12, (uint32_t)img->kind);
    put_u64(h + 16, img->size);
    wf_sha256 c;
    wf_sha256_init(&c);
    wf_sha256_update(&c, img->data, img->size);
    wf_sha256_final(&c, h + 24);
}

/* All n bytes read into `in`, or (in NULL) written from `out`, retried after a signal; 0 on an
 * error or an early end of file. */
static int transfer_all(int fd, unsigned char *in, const unsigned char *out, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t k = in ? read(fd, in + done, n - done) : write(fd, out + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        done += (size_t)k;
    }
    return 1;
}

static int read_all(int fd, unsigned char *p, size_t n) {
    return transfer_all(fd, p, NULL, n);
}

static int write_all(int fd, const unsigned char *p, size_t n) {
    return transfer_all(fd, NULL, p, n);
}

/* Deletes the bad entry `name` if it is still the file that was read (`was`): renamed aside to a
 * temp name first, then deleted when it is that file, or renamed back when it is not (another
 * process renamed a new entry over the bad one meanwhile; comparing before an unlink by name
 * would leave a moment in which that new entry gets deleted). */
static void drop_bad(int dfd, const char *dir, const char *name, const struct stat *was,
                     const char *why) {
    char tmp[WF_KC_NAME], key[65];
    memcpy(key, name, 64);
    key[64] = '\0';
    int fd = make_temp(dfd, key, tmp);
    if (fd < 0) {
        note("cannot remove the invalid cache entry %s/%s (%s): %s", dir, name, why,
             strerror(errno));
        return;
    }
    close(fd);
    if (renameat(dfd, name, dfd, tmp) != 0) { /* gone already, or a directory */
        int err = errno;
        unlinkat(dfd, tmp, 0);
        if (err != ENOENT)
            note("cannot remove the invalid cache entry %s/%s (%s): %s", dir, name, why,
                 strerror(err));
        return;
    }
    struct stat now;
    if (fstatat(dfd, tmp, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == was->st_dev &&
        now.st_ino == was->st_ino)
        unlinkat(dfd, tmp, 0);
    else if (renameat(dfd, tmp, dfd, name) != 0) /* a new entry: back in place */
        unlinkat(dfd, tmp, 0);
    note("removed the invalid cache entry %s/%s (%s)", dir, name, why);
}

/* Reads and verifies an open entry; NULL with `why` when it is not valid. */
static unsigned char *read_entry(int fd, const struct stat *st, int *kind, size_t *size,
                                 const char **why) {
    unsigned char h[WF_KC_HEADER];
    if (st->st_size < WF_KC_HEADER || !read_all(fd, h, sizeof h)) {
        *why = "shorter than its header";
        return NULL;
    }
    uint64_t n = get_u64(h + 16);
    uint32_t k = get_u32(h + 12);
    if (memcmp(h, wf_kc_magic, 8) != 0) {
        *why = "wrong magic";
        return NULL;
    }
    if (get_u32(h + 8) != WF_KC_FORMAT) {
        *why = "another format version";
        return NULL;
    }
    if (k != WF_KIMAGE_CUBIN && k != WF_KIMAGE_PTX) {
        *why = "unknown payload kind";
        return NULL;
    }
    if (n == 0 || n > WF_KC_MAX_PAYLOAD || (uint64_t)st->st_size != WF_KC_HEADER + n) {
        *why = "size differs from its header (truncated?)";
        return NULL;
    }
    unsigned char *data = malloc((size_t)n + 1);
    if (!data) {
        *why = NULL; /* not the entry's fault: a miss, the entry stays */
        return NULL;
    }
    unsigned char sum[32];
    wf_sha256 c;
    if (!read_all(fd, data, (size_t)n)) {
        free(data);
        *why = "read failed or truncated";
        return NULL;
    }
    wf_sha256_init(&c);
    wf_sha256_update(&c, data, (size_t)n);
    wf_sha256_final(&c, sum);
    if (memcmp(sum, h + 24, 32) != 0) {
        free(data);
        *why = "payload checksum mismatch";
        return NULL;
    }
    data[n] = '\0';
    *kind = (int)k;
    *size = (size_t)n;
    return data;
}

/* Reads entry `name` of the open directory: 1 with the image, or 0 (a miss; an invalid entry is
 * deleted). */
static int get_at(int dfd, const char *dir, const char *name, wf_kimage *img) {
    struct stat st;
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT)
            return 0;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
            drop_bad(dfd, dir, name, &st,
                     S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
        else
            note("cannot read the cache entry %s/%s (%s)", dir, name, strerror(err));
        return 0;
    }
    if (fstat(fd, &st) != 0) {
        close(fd);
        return 0;
    }
    const char *why = "not a regular file"; /* a FIFO, a device: opened without blocking */
    unsigned char *data = NULL;
    if (S_ISREG(st.st_mode))
        data = read_entry(fd, &st, &img->kind, &img->size, &why);
    if (data) {
        img->data = data;
        futimens(fd, NULL); /* recently used: eviction takes the oldest mtimes first */
    }
    close(fd);
    if (!data && why)
        drop_bad(dfd, dir, name, &st, why);
    return data != NULL;
}

int wf_kcache_get(const char *key, wf_kimage *img) {
    char dir[PATH_MAX], name[WF_KC_NAME];
    memset(img, 0, sizeof *img);
    if (!key_ok(key))
        return 0;
    int dfd = dir_open(dir, sizeof dir);
    if (dfd < 0)
        return 0;
    entry_name(name, key);
    int hit = get_at(dfd, dir, name, img);
    close(dfd);
    return hit;
}

/* ---- eviction ---- */

typedef struct kc_file {
    char name[80];
    off_t size;
    struct timespec mtime;
    int newest; /* the entry just written: deleted last */
} kc_file;

static int older_first(const void *a, const void *b) {
    const kc_file *x = a, *y = b;
    if (x->newest != y->newest)
        return x->newest - y->newest;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* $WARPFFT_CACHE_MAX_SIZE: decimal digits only (strtoull would take " -1" as 2^64 - 1). */
static unsigned long long max_size(void) {
    const char *s = wf_getenv("WARPFFT_CACHE_MAX_SIZE");
    if (!s || !s[0])
        return WF_KC_DEFAULT_MAX;
    unsigned long long v = 0;
    for (const char *c = s; *c; c++) {
        unsigned d = (unsigned)(*c - '0');
        if (d > 9 || v > (ULLONG_MAX - d) / 10) {
            note("WARPFFT_CACHE_MAX_SIZE=%.64s is not a number of bytes; using %llu", s,
                 WF_KC_DEFAULT_MAX);
            return WF_KC_DEFAULT_MAX;
        }
        v = 10 * v + d;
    }
    return v;
}

/* Is `name` an entry (<64 hex>.wfk) or a temp file (.tmp-<64 hex>-XXXXXX)? */
static int is_entry(const char *name) {
    size_t n = strlen(name);
    char key[65];
    if (n != 68 || strcmp(name + 64, ".wfk") != 0)
        return 0;
    memcpy(key, name, 64);
    key[64] = '\0';
    return key_ok(key);
}

static int is_temp(const char *name) {
    return strncmp(name, ".tmp-", 5) == 0 && strlen(name) == 5 + 64 + 7;
}

/* Deletes the least recently used entries of the open directory beyond the size bound, and
 * temp files over an hour old; `newest` (just written) goes last. */
static void evict(int dfd, const char *dir, const char *newest) {
    unsigned long long max = max_size();
    int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own read position */
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!d) {
        note("cannot list the cache directory %s (%s)", dir, strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return;
    }
    kc_file *f = NULL;
    size_t n = 0, cap = 0;
    unsigned long long total = 0;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        int entry = is_entry(e->d_name), temp = is_temp(e->d_name);
        if ((!entry && !temp) || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if (temp) { /* left by a process that died while writing: gone after an hour */
            if (now - st.st_mtime > 3600)
                unlinkat(dfd, e->d_name, 0);
            continue;
        }
        if (n == cap) {
            size_t c = cap ? 2 * cap : 64;
            kc_file *g = realloc(f, c * sizeof *g);
            if (!g)
                break;
            f = g;
            cap = c;
        }
        memcpy(f[n].name, e->d_name, 69); /* an entry name: 68 characters and the NUL */
        f[n].size = st.st_size;
        f[n].mtime = st.st_mtim;
        f[n].newest = strcmp(e->d_name, newest) == 0;
        total += (unsigned long long)st.st_size;
        n++;
    }
    closedir(d); /* closes lfd */
    if (total > max && n > 0) {
        qsort(f, n, sizeof *f, older_first);
        for (size_t i = 0; i < n && total > max; i++)
            if (unlinkat(dfd, f[i].name, 0) == 0 || errno == ENOENT)
                total -= (unsigned long long)f[i].size;
    }
    free(f);
}

/* ---- writing ---- */

void wf_kcache_put(const char *key, const wf_kimage *img) {
    char dir[PATH_MAX], name[WF_KC_NAME], tmp[WF_KC_NAME];
    if (!key_ok(key) || !img || !img->data || img->size == 0)
        return;
    int dfd = dir_open(dir, sizeof dir);
    if (dfd < 0)
        return;
    entry_name(name, key);
    int fd = make_temp(dfd, key, tmp); /* unique per writer, mode 0600, in the same directory */
    if (fd < 0) {
        note("cannot write to the cache directory %s (%s); kernels are compiled every time", dir,
             strerror(errno));
        close(dfd);
        return;
    }
    unsigned char h[WF_KC_HEADER];
    header(h, img);
    int ok = write_all(fd, h, sizeof h) && write_all(fd, img->data, img->size);
    int err = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        err = errno;
    }
    if (ok && renameat(dfd, tmp, dfd, name) != 0) {
        ok = 0;
        err = errno;
    }
    if (!ok) {
        unlinkat(dfd, tmp, 0);
        note("cannot write the cache entry %s/%s (%s)", dir, name, strerror(err));
    } else {
        evict(dfd, dir, name);
    }
    close(dfd);
}

void wf_kcache_drop(const char *key) {
    char dir[PATH_MAX], name[WF_KC_NAME];
    if (!key_ok(key))
        return;
    int dfd = dir_open(dir, sizeof dir);
    if (dfd < 0)
        return;
    entry_name(name, key);
    unlinkat(dfd, name, 0);
    close(dfd);
}

void wf_kcache_state(char *dir, size_t dir_len, char *note_out, size_t note_len) {
    char why[400] = "", d[PATH_MAX];
    int on = dir_name(d, sizeof d, why, sizeof why);
    if (dir_len > 0)
        snprintf(dir, dir_len, "%s", on ? d : "");
    pthread_mutex_lock(&wf_kc_lock);
    if (note_len > 0)
        snprintf(note_out, note_len, "%s", on ? wf_kc_note : why);
    pthread_mutex_unlock(&wf_kc_lock);
}
