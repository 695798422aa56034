/*
 * check.h — the harness every C test program shares: pass/fail counters, CHECK, the summary
 * line, and scenarios run in a forked child. Header only; the file that has main defines the
 * counters:
 *     int n_pass, n_fail;
 *
 *   CHECK(cond)               counts cond; when it is false prints
 *                                 FAIL file:line: cond: last error: <warpfft_last_error()>
 *   CHECK(cond, fmt, ...)     the same with the printf message fmt, ... after "cond: "
 *   CHECK_MSG(sub)            the last error message contains the string sub
 *   check_status_msg(...)     a status and the message that goes with it (EXPECT macros)
 * Both are expressions whose value is whether the check passed: if (!CHECK(p)) return;
 * check_pass and check_fail are the functions behind them, for helpers that report their
 * caller's line.
 */
#ifndef WARPFFT_TEST_CHECK_H
#define WARPFFT_TEST_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "warpfft.h"

extern int n_pass, n_fail;

/* A passed check: counts it; returns 1. */
static inline int check_pass(void) {
    n_pass++;
    return 1;
}

/* A failed check: counts it and prints "FAIL file:line: cond: " and the message; returns 0. */
__attribute__((format(printf, 4, 5))) static inline int
check_fail(const char *file, int line, const char *cond, const char *fmt, ...) {
    n_fail++;
    printf("FAIL %s:%d: %s: ", file, line, cond);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    return 0;
}

/* cond is stringified here, before any macro in it expands; a message picks CHECK_FMT_. The
 * message's arguments are evaluated only when the check fails. */
#define CHECK(c, ...)                                                                              \
    CHECK_PICK_(__VA_OPT__(CHECK_FMT_, ) CHECK_LAST_, _)(c, #c __VA_OPT__(, ) __VA_ARGS__)
#define CHECK_PICK_(name, ...) name
#define CHECK_FMT_(c, text, ...)                                                                   \
    ((c) ? check_pass() : check_fail(__FILE__, __LINE__, text, __VA_ARGS__))
#define CHECK_LAST_(c, text) CHECK_FMT_(c, text, "last error: %s", warpfft_last_error())
#define CHECK_MSG(sub)                                                                             \
    CHECK_FMT_(strstr(warpfft_last_error(), (sub)) != NULL, "last error has " #sub,                \
               "last error: %s", warpfft_last_error())

/* A call's status and message (warpfft_last_error()): `st` is `want`, and the message is empty
 * on success or contains `word` otherwise. Counts one check; a failure prints
 *     FAIL file:line: EXPECT: status <st> (want <want>), message "<msg>" (want "<word>")
 * Returns whether it passed. For EXPECT macros of the tests, which pass their caller's line. */
static inline int check_status_msg(const char *file, int line, int st, int want, const char *word) {
    const char *msg = warpfft_last_error();
    if (st == want && (want == 0 ? msg[0] == '\0' : strstr(msg, word) != NULL))
        return check_pass();
    return check_fail(file, line, "EXPECT", "status %d (want %d), message \"%s\" (want \"%s\")", st,
                      want, msg, word);
}

/* Prints the last line of a test program, "<label>N passed, M failed"; returns its exit status
 * (1 after any failure). */
static inline int check_summary(const char *label) {
    printf("%s%d passed, %d failed\n", label, n_pass, n_fail);
    return n_fail ? 1 : 0;
}

/* Runs fn in a forked child with fresh counters (for state a process keeps once set up: a
 * cuFFT or NVRTC found, an environment read) and adds the child's counts; a child that crashes
 * or exits abnormally counts as one failure. */
static inline void run_isolated(const char *name, void (*fn)(void)) {
    int fd[2];
    if (pipe(fd) != 0) {
        n_fail++;
        printf("FAIL scenario %s: pipe: %s\n", name, strerror(errno));
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        n_fail++;
        printf("FAIL scenario %s: fork: %s\n", name, strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        close(fd[0]);
        n_pass = n_fail = 0;
        fn();
        int r[2] = {n_pass, n_fail};
        fflush(stdout);
        _exit(write(fd[1], r, sizeof r) == sizeof r ? 0 : 1);
    }
    close(fd[1]);
    int r[2] = {0, 0}, ws = 0;
    ssize_t k = read(fd[0], r, sizeof r);
    close(fd[0]);
    waitpid(pid, &ws, 0);
    if (k != (ssize_t)sizeof r || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        n_fail++;
        printf("FAIL scenario %s: the child crashed or exited abnormally\n", name);
        return;
    }
    n_pass += r[0];
    n_fail += r[1];
    printf("  scenario %-16s %d passed, %d failed\n", name, r[0], r[1]);
}

#endif /* WARPFFT_TEST_CHECK_H */
