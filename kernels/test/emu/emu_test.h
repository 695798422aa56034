/*
 * emu_test.h — what the emulation tests (test_emu.cpp, test_emu_sets.cpp,
 * test_emu_offsets.cpp) share: the integer types of the kernels' signatures, the failure count
 * and EXPECT, d3 for launch shapes, run.sh's "quick", the dispatch of a case on its precision
 * and main's summary line and exit status.
 */
#ifndef WF_EMU_TEST_H
#define WF_EMU_TEST_H

#include "cuda_emu.h"

#include <cstdio>
#include <string>

typedef long long i64;
typedef unsigned long long u64;

static int g_fail = 0; /* the checks failed so far */
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                       \
            std::printf(__VA_ARGS__);                                                              \
            std::printf("\n");                                                                     \
            ++g_fail;                                                                              \
        }                                                                                          \
    } while (0)

static dim3 d3(unsigned x, unsigned y = 1) {
    dim3 d;
    d.x = x;
    d.y = y;
    return d;
}

/* `run.sh quick` (argv[1] "quick"): each test runs a subset of its cases. */
static bool wf_emu_quick(int argc, char **argv) {
    return argc > 1 && std::string(argv[1]) == "quick";
}

/* f.template operator()<T, Cx>(): <float, float2> for prec 32, else <double, double2>. */
template <class F> static void wf_emu_by_prec(int prec, F f) {
    if (prec == 32)
        f.template operator()<float, float2>();
    else
        f.template operator()<double, double2>();
}

/* main's last line: prints "<what>: <n> failures"; the exit status, 0 when none failed. */
static int wf_emu_summary(const char *what) {
    std::printf("%s: %d failures\n", what, g_fail);
    return g_fail ? 1 : 0;
}

#endif
