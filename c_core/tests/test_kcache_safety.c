/*
 * test_kcache_safety.c — the kernel cache (kcache.c) on a file system someone else can change
 * (issue 31, items 3 and 8). The cache holds code the process loads, so:
 *  - the directory swapped between its check and its use: a traced child loads an entry while
 *    this process, with the child stopped before its k-th system call, renames the cache
 *    directory away and puts another in its place (a directory other users can write, a symbolic
 *    link to it, as root also a directory owned by another user), holding a valid entry with
 *    another payload. Every k is tried, so the test is deterministic: the planted payload is
 *    never loaded. The same as a real race: a thread exchanges the two while loads run;
 *  - entries that are FIFOs (opening one must not block) or symbolic links (refused and removed,
 *    their target untouched); a cache directory that is itself a symbolic link (refused);
 *  - WARPFFT_CACHE_MAX_SIZE with a sign or blanks (" -1" was read as 2^64 - 1: no bound);
 *  - deleting a bad entry while another process renames a good one over it (every k again): the
 *    good one stays.
 * Tracing needs ptrace and PTRACE_GET_SYSCALL_INFO (Linux 5.3); without them those parts skip
 * visibly.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "test_kcache.h"

/* ---- a child under ptrace, with something done before its k-th system call ---- */

enum { TRACE_UNAVAILABLE = -1 };

static int stop_and_reap(pid_t pid) {
    int ws = 0;
    kill(pid, SIGKILL);
    waitpid(pid, &ws, 0);
    return TRACE_UNAVAILABLE;
}

/* Runs child() in a forked, traced process and, before its k-th system call (counted from when
 * it is ready), at_k() here while the child is stopped. Returns the child's exit status, 128 +
 * the signal that ended it, or TRACE_UNAVAILABLE; *calls gets the system calls it made. */
static int traced(int (*child)(void), long k, void (*at_k)(void), long *calls) {
    *calls = 0;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
            _exit(250);
        raise(SIGSTOP);
        _exit(child()); /* no exit-time leak check: LeakSanitizer cannot trace a traced process */
    }
    int ws = 0;
    if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFSTOPPED(ws))
        return TRACE_UNAVAILABLE; /* PTRACE_TRACEME refused: the child exited */
    long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;
    if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)opts) != 0)
        return stop_and_reap(pid);
    long sig = 0;
    for (;;) {
        if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)sig) != 0 || waitpid(pid, &ws, 0) != pid)
            return stop_and_reap(pid);
        if (WIFEXITED(ws))
            return WEXITSTATUS(ws);
        if (WIFSIGNALED(ws))
            return 128 + WTERMSIG(ws);
        sig = 0;
        if (WSTOPSIG(ws) != (SIGTRAP | 0x80)) { /* a signal for the child: deliver it */
            sig = WSTOPSIG(ws);
            continue;
        }
        struct __ptrace_syscall_info si;
        if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof si, &si) <= 0)
            return stop_and_reap(pid);
        if (si.op == PTRACE_SYSCALL_INFO_ENTRY && ++*calls == k)
            at_k();
    }
}

/* ---- another directory swapped in for the cache directory ---- */

enum { GOT_OURS = 10, GOT_PLANTED, GOT_NOTHING, GOT_OTHER };

static char the_key[65];
static wf_kimage ours, planted;
static char dir_real[PATH_MAX], dir_away[PATH_MAX + 8], dir_other[PATH_MAX];

static int get_outcome(void) {
    wf_kimage got;
    if (!wf_kcache_get(the_key, &got))
        return GOT_NOTHING;
    int r = same(&ours, &got) ? GOT_OURS : same(&planted, &got) ? GOT_PLANTED : GOT_OTHER;
    wf_kimage_free(&got);
    return r;
}

/* The attacker's move, with the child stopped: the cache directory away, theirs in its place. */
static void swap_in(void) {
    if (rename(dir_real, dir_away) != 0 || rename(dir_other, dir_real) != 0)
        printf("  (swap failed: %s)\n", strerror(errno));
}

static void swap_back(void) {
    struct stat st;
    if (lstat(dir_away, &st) == 0 &&
        (rename(dir_real, dir_other) != 0 || rename(dir_away, dir_real) != 0))
        printf("  (swap back failed: %s)\n", strerror(errno));
}

static const char *outcome_name(int r) {
    return r == GOT_OURS      ? "its own entry"
           : r == GOT_PLANTED ? "THE PLANTED ENTRY"
           : r == GOT_NOTHING ? "nothing (a miss)"
           : r == GOT_OTHER   ? "other bytes"
                              : "a crash";
}

/* Loads with `form` swapped in before system call k, for every k the load makes. 0 when tracing
 * is unavailable (skipped). */
static int swap_walk(const char *form) {
    long k, calls = 0;
    int n_ours = 0, n_nothing = 0;
    for (k = 1; k < 5000; k++) {
        int r = traced(get_outcome, k, swap_in, &calls);
        swap_back();
        if (r == TRACE_UNAVAILABLE) {
            printf("  SKIP swap walk (%s): ptrace with PTRACE_GET_SYSCALL_INFO unavailable\n",
                   form);
            return 0;
        }
        if (k > calls) /* the load ended before call k: nothing was swapped */
            break;
        if (!CHECK(r == GOT_OURS || r == GOT_NOTHING,
                   "%s swapped in before system call %ld of the load (of %ld): it loaded %s", form,
                   k, calls, outcome_name(r)))
            return 1;
        n_ours += r == GOT_OURS;
        n_nothing += r == GOT_NOTHING;
    }
    /* early swaps are refused (a miss), late ones come after the entry was opened (a hit) */
    CHECK(n_ours > 0 && n_nothing > 0, "%s: %d hits, %d misses over %ld calls", form, n_ours,
          n_nothing, calls);
    printf("  swap walk, %s: %ld system calls, swapped before each: %d hits, %d misses, never "
           "the planted entry\n",
           form, calls, n_ours, n_nothing);
    return 1;
}

/* The cache directory <root>/swap/cache with our entry, and <root>/swap/theirs with a valid
 * entry of the same key but another payload (SHA-256 is integrity, not authentication). */
static void swap_setup(void) {
    key_of("swap", the_key);
    ours = image(WF_KIMAGE_CUBIN, 3000, 11);
    planted = image(WF_KIMAGE_CUBIN, 3000, 12);
    set_cache("swap/theirs");
    wf_kcache_put(the_key, &planted);
    set_cache("swap/cache");
    wf_kcache_put(the_key, &ours);
    snprintf(dir_real, sizeof dir_real, "%s", cache_dir());
    snprintf(dir_away, sizeof dir_away, "%s.away", dir_real);
}

static void test_swap_walk(void) {
    swap_setup();
    char theirs[PATH_MAX];
    snprintf(theirs, sizeof theirs, "%s/swap/theirs", root);
    snprintf(dir_other, sizeof dir_other, "%s", theirs);
    CHECK(chmod(theirs, 0777) == 0);
    if (!swap_walk("a directory other users can write"))
        return;
    snprintf(dir_other, sizeof dir_other, "%s/swap/link", root);
    CHECK(symlink(theirs, dir_other) == 0);
    swap_walk("a symbolic link to it");
    if (geteuid() == 0) {
        CHECK(chmod(theirs, 0755) == 0 && chown(theirs, 65534, 65534) == 0);
        snprintf(dir_other, sizeof dir_other, "%s", theirs);
        swap_walk("a directory owned by another user");
        CHECK(chown(theirs, 0, 0) == 0);
    }
    CHECK(get_outcome() == GOT_OURS); /* everything back in place */
}

/* The same as a race: a thread exchanges the cache directory and a symbolic link to theirs
 * (renameat2 RENAME_EXCHANGE: both names exist at all times) while loads run. */
static atomic_int race_stop, race_errno;
static atomic_long race_swaps;

static void *attacker(void *arg) {
    (void)arg;
    while (!atomic_load(&race_stop))
        if (renameat2(AT_FDCWD, dir_real, AT_FDCWD, dir_other, RENAME_EXCHANGE) == 0) {
            atomic_fetch_add(&race_swaps, 1);
        } else {
            atomic_store(&race_errno, errno);
            break;
        }
    return NULL;
}

static void test_swap_race(void) {
    snprintf(dir_other, sizeof dir_other, "%s/swap/link", root); /* test_swap_walk made it */
    struct stat st;
    if (lstat(dir_other, &st) != 0 || !S_ISLNK(st.st_mode)) {
        char theirs[PATH_MAX];
        snprintf(theirs, sizeof theirs, "%s/swap/theirs", root);
        CHECK(symlink(theirs, dir_other) == 0);
    }
    pthread_t t;
    atomic_store(&race_stop, 0);
    atomic_store(&race_swaps, 0);
    if (!CHECK(pthread_create(&t, NULL, attacker, NULL) == 0))
        return;
    int n[4] = {0, 0, 0, 0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long tries = 0;
    for (; tries < 20000; tries++) {
        n[get_outcome() - GOT_OURS]++;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec) > 2.0)
            break;
    }
    atomic_store(&race_stop, 1);
    pthread_join(t, NULL);
    long swaps = atomic_load(&race_swaps);
    if (swaps % 2) /* put the directory back */
        renameat2(AT_FDCWD, dir_real, AT_FDCWD, dir_other, RENAME_EXCHANGE);
    if (swaps == 0) {
        printf("  SKIP swap race: renameat2(RENAME_EXCHANGE) failed here (%s)\n",
               strerror(atomic_load(&race_errno)));
        return;
    }
    CHECK(n[GOT_PLANTED - GOT_OURS] == 0 && n[GOT_OTHER - GOT_OURS] == 0,
          "%ld loads while the directory was exchanged %ld times: the planted entry loaded %d "
          "times",
          tries, swaps, n[GOT_PLANTED - GOT_OURS]);
    CHECK(n[0] > 0, "no load found the cache directory in place in %ld tries", tries);
    printf("  swap race: %ld loads, %ld exchanges: %d hits, %d misses, %d planted\n", tries, swaps,
           n[0], n[GOT_NOTHING - GOT_OURS], n[GOT_PLANTED - GOT_OURS]);
    CHECK(get_outcome() == GOT_OURS);
}

/* ---- entries that are not regular files; a directory that is a symbolic link ---- */

/* A FIFO named like an entry: the load returns at once (a miss) and removes it. */
static void test_fifo_entry(void) {
    set_cache("fifo");
    char key[65], path[PATH_MAX + 80];
    key_of("fifo", key);
    wf_kimage img = image(WF_KIMAGE_PTX, 100, 13), got;
    wf_kcache_put(key, &img); /* creates the directory */
    entry_path(key, path, sizeof path);
    CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10); /* an open without O_NONBLOCK waits for a writer forever */
        _exit(wf_kcache_get(key, &got) == 0 ? 0 : 1);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (!CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
               "a load of a FIFO entry: %s %d (SIGALRM = %d: it blocked)",
               WIFSIGNALED(ws) ? "killed by signal" : "exit status",
               WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws), SIGALRM)) {
        unlink(path);
        wf_kimage_free(&img);
        return;
    }
    struct stat st;
    if (lstat(path, &st) != 0) /* the child removed it: again here, for the note */
        CHECK(mkfifo(path, 0600) == 0);
    CHECK(wf_kcache_get(key, &got) == 0);
    CHECK(lstat(path, &st) != 0 && errno == ENOENT, "the FIFO is still there");
    note_has("not a regular file", __LINE__);
    wf_kcache_put(key, &img); /* and the entry is written again */
    CHECK(wf_kcache_get(key, &got) == 1 && same(&img, &got));
    wf_kimage_free(&got);
    wf_kimage_free(&img);
}

/* A symbolic link named like an entry, to a valid entry elsewhere: not followed; the link is
 * removed, its target stays. */
static void test_symlink_entry(void) {
    char key[65], target[PATH_MAX + 80], path[PATH_MAX + 80];
    key_of("symlink-entry", key);
    wf_kimage img = image(WF_KIMAGE_CUBIN, 500, 14), got;
    set_cache("symlink-target");
    wf_kcache_put(key, &img);
    entry_path(key, target, sizeof target);
    set_cache("symlink-entry");
    wf_kcache_put(key, &img);
    entry_path(key, path, sizeof path);
    CHECK(unlink(path) == 0 && symlink(target, path) == 0);
    if (!CHECK(wf_kcache_get(key, &got) == 0, "an entry that is a symbolic link was loaded"))
        wf_kimage_free(&got);
    struct stat st;
    CHECK(lstat(path, &st) != 0 && errno == ENOENT, "the link is still there");
    CHECK(file_size(target) == 64 + 500, "the link's target was touched");
    note_has("symbolic link", __LINE__);
    wf_kimage_free(&img);
}

/* WARPFFT_CACHE_DIR naming a symbolic link (to a directory that would pass): not used. */
static void test_symlink_dir(void) {
    char key[65], link[PATH_MAX], real[PATH_MAX];
    key_of("symlink-dir", key);
    wf_kimage img = image(WF_KIMAGE_CUBIN, 500, 15), got;
    set_cache("symlink-dir-real");
    wf_kcache_put(key, &img);
    snprintf(real, sizeof real, "%s", cache_dir());
    snprintf(link, sizeof link, "%s/symlink-dir", root);
    CHECK(symlink(real, link) == 0);
    static const char *const tails[] = {"", "/", "//"};
    for (int i = 0; i < 3; i++) {
        char dir[PATH_MAX + 4];
        snprintf(dir, sizeof dir, "%s%s", link, tails[i]);
        setenv("WARPFFT_CACHE_DIR", dir, 1);
        if (!CHECK(wf_kcache_get(key, &got) == 0, "WARPFFT_CACHE_DIR=%s (a symbolic link) was used",
                   dir))
            wf_kimage_free(&got);
        note_has("is a symbolic link", __LINE__);
    }
    setenv("WARPFFT_CACHE_DIR", real, 1);
    CHECK(wf_kcache_get(key, &got) == 1 && same(&img, &got));
    wf_kimage_free(&got);
    /* a trailing slash on a real directory is the directory */
    char slash[PATH_MAX + 4];
    snprintf(slash, sizeof slash, "%s/", real);
    setenv("WARPFFT_CACHE_DIR", slash, 1);
    CHECK(wf_kcache_get(key, &got) == 1 && same(&img, &got));
    wf_kimage_free(&got);
    wf_kimage_free(&img);
}

/* ---- the size bound ---- */

static void test_max_size_parse(void) {
    set_cache("maxsize");
    char key[65];
    key_of("maxsize", key);
    wf_kimage img = image(WF_KIMAGE_CUBIN, 1000 - 64, 16);
    /* Only decimal digits are a number of bytes: strtoull took " -1" as 2^64 - 1 (no bound). */
    static const char *const bad[] = {
        " -1", "-1", "+500", " 500", "500 ", "0x400", "5e2", "500k", "18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("WARPFFT_CACHE_MAX_SIZE", bad[i], 1);
        wf_kcache_put(key, &img);
        char want[128];
        snprintf(want, sizeof want, "WARPFFT_CACHE_MAX_SIZE=%s is not a number of bytes", bad[i]);
        note_has(want, __LINE__);
        note_has("using 268435456", __LINE__);
    }
    /* a bound that is a number applies */
    char path[PATH_MAX + 80];
    entry_path(key, path, sizeof path);
    setenv("WARPFFT_CACHE_MAX_SIZE", "999", 1);
    wf_kcache_put(key, &img);
    CHECK(file_size(path) < 0, "a 1000-byte entry kept under a 999-byte bound");
    setenv("WARPFFT_CACHE_MAX_SIZE", "1000", 1);
    wf_kcache_put(key, &img);
    CHECK(file_size(path) == 1000);
    unsetenv("WARPFFT_CACHE_MAX_SIZE");
    wf_kimage_free(&img);
}

/* ---- a bad entry replaced by a good one while it is being deleted ---- */

static char good_file[PATH_MAX + 80], bad_entry[PATH_MAX + 80];

/* <key>.wfk damaged, and a good entry of the key beside it (as another writer's temp file). */
static void replace_setup(void) {
    wf_kcache_put(the_key, &ours);
    CHECK(rename(bad_entry, good_file) == 0);
    wf_kcache_put(the_key, &ours);
    int fd = open(bad_entry, O_RDWR);
    unsigned char b = 0;
    CHECK(fd >= 0 && pread(fd, &b, 1, 64 + 100) == 1);
    b ^= 1;
    CHECK(fd >= 0 && pwrite(fd, &b, 1, 64 + 100) == 1);
    if (fd >= 0)
        close(fd);
}

static void replace_now(void) { /* the other writer's rename */
    if (rename(good_file, bad_entry) != 0)
        printf("  (replace failed: %s)\n", strerror(errno));
}

static void test_bad_entry_replaced(void) {
    set_cache("replace");
    key_of("replace", the_key);
    entry_path(the_key, bad_entry, sizeof bad_entry);
    snprintf(good_file, sizeof good_file, "%s/good", cache_dir());
    long k, calls = 0;
    int hits = 0, misses = 0;
    for (k = 1; k < 5000; k++) {
        replace_setup();
        int r = traced(get_outcome, k, replace_now, &calls);
        if (r == TRACE_UNAVAILABLE) {
            printf("  SKIP bad-entry replace walk: ptrace with PTRACE_GET_SYSCALL_INFO "
                   "unavailable\n");
            break;
        }
        if (k > calls)
            break;
        wf_kimage got;
        if (!CHECK(r == GOT_OURS || r == GOT_NOTHING, "load: %s", outcome_name(r)) ||
            !CHECK(wf_kcache_get(the_key, &got) == 1,
                   "a good entry renamed over the bad one before system call %ld (of %ld) of "
                   "the load that deletes the bad one is gone",
                   k, calls))
            break;
        CHECK(same(&ours, &got));
        wf_kimage_free(&got);
        hits += r == GOT_OURS;
        misses += r == GOT_NOTHING;
    }
    if (calls > 0 && k > calls) {
        CHECK(hits > 0 && misses > 0, "%d hits, %d misses", hits, misses);
        printf("  bad entry replaced before each of %ld system calls of its load: the good "
               "entry always stays (%d hits, %d misses)\n",
               calls, hits, misses);
    }
    unlink(good_file);
}

void test_kcache_safety(void) {
    test_swap_walk();
    test_swap_race();
    test_fifo_entry();
    test_symlink_entry();
    test_symlink_dir();
    test_max_size_parse();
    test_bad_entry_replaced();
    wf_kimage_free(&ours);
    wf_kimage_free(&planted);
}
