/*
 * warpfft.h — the whole public C ABI of warpfft, a GPU non-uniform FFT library: this umbrella
 * includes its parts by topic, the headers under warpfft/ (listed at the end), and states the
 * conventions they share.
 *
 * Include only this header; it needs no CUDA headers. Device pointers cross the ABI as
 * `void *`, CUDA streams as `uint64_t` (the CUstream / cudaStream_t value cast to an integer).
 *
 * Lifecycle (four verbs over an opaque plan):
 *
 *     warpfft_opts opts;
 *     warpfft_opts_default(&opts);
 *     warpfft_plan plan;
 *     int64_t n[3] = {256, 256, 1};
 *     if (warpfft_plan_create(1, 2, n, +1, 1, 1e-6, WARPFFT_F32, &opts, &plan) != WARPFFT_SUCCESS)
 *         fprintf(stderr, "%s\n", warpfft_last_error());
 *     warpfft_setpts(plan, WARPFFT_F32, M, d_x, d_y, NULL);   // device arrays of M floats
 *     warpfft_execute(plan, WARPFFT_F32, d_c, d_fk);          // complex float, interleaved
 *     warpfft_plan_destroy(plan);
 *
 * Definitions (as FINUFFT):
 *   type 1:  f[k] = sum_j c[j] exp(iflag * i * k . x_j)        for modes k, points x_j
 *   type 2:  c[j] = sum_k f[k] exp(iflag * i * k . x_j)
 *   type 3:  f[k] = sum_j c[j] exp(iflag * i * s_k . x_j)    for targets s_k, sources x_j
 *   (type 3: any finite real sources and targets, not periodic; see "type 3" below.)
 *   Points are 2*pi periodic: any finite real coordinate is folded into [-pi, pi).
 *   Mode k_d runs over -floor(N_d/2) .. ceil(N_d/2)-1. Mode arrays are stored with dimension 1
 *   fastest: f[i1 + N1*(i2 + N2*i3)], and transform t of a batch at offset t*N1*N2*N3
 *   (strengths: c[t*M + j]). Index i_d -> k_d depends on opts.modeord:
 *   0 (CMCL): k = i - floor(N/2);  1 (FFT order): k = i for i < ceil(N/2), else i - N.
 *   Complex data are interleaved (re, im) pairs of the plan's precision.
 *   Real data (opts.real_data = 1, types 1 and 2): the strengths c are real (T c[ntransf][M])
 *   and the modes the non-redundant half of Hermitian-symmetric ones, complex
 *   fk[ntransf][N3][N2][N1/2 + 1]: dimension 1 halved, k1 = 0 .. N1/2 in that order whatever
 *   modeord (dims 2 and 3 by modeord). Type 2 then writes c[j] = Re(sum over the half of
 *   a_k1 f[k] exp(iflag * i * k . x_j)), a_0 = 1, a_k1>0 = 2 (docs/c.md, "Real-valued data").
 *
 * Errors: every function returns a warpfft_status. On failure, warpfft_last_error() returns a
 * message for the calling thread (valid until that thread's next warpfft call). No function
 * prints, aborts or exits.
 *
 * Threads: the library's global state (driver and cuFFT loading, module cache) is initialised
 * once, on first use, thread-safely. A plan may be used by one thread at a time; different
 * plans may be used from different threads concurrently.
 *
 * fork(): as with CUDA itself, the child of a fork() made after the parent's first GPU call
 * cannot use the GPU: there every warpfft call that needs it (including on plans and pointers
 * inherited from the parent) returns WARPFFT_ERR_CUDA saying so, without hanging, even if
 * another thread of the parent was inside warpfft at the time of the fork. Calls that need no
 * GPU (warpfft_plan_params, the manifest, warpfft_cufft_probe) work. Fork before the first
 * GPU call, or start workers with exec (Python multiprocessing: 'spawn' or 'forkserver').
 *
 * Streams: setpts and execute enqueue their work on opts.stream (0 = the legacy default stream)
 * and return without waiting for the GPU, except where noted below. Input arrays must stay
 * valid and unchanged until the work on that stream has finished.
 *
 * CUDA graphs (docs/cuda-graphs.md): setpts and execute may be captured into a graph
 * (cuStreamBeginCapture on opts.stream). A replay then reads and writes the plan's buffers, so
 * the graph holds the plan until it and every executable graph made from it are destroyed and
 * CUDA has run the destructor of the user object warpfft gave it: meanwhile
 * warpfft_plan_destroy refuses the plan (WARPFFT_ERR_INVALID_ARG, the plan stays valid), no
 * setpts may grow its per-point arrays, no setpts3 runs, and the live-plan pool neither hands
 * it out nor destroys it. During a capture, what would wait for the stream or allocate refuses
 * with WARPFFT_ERR_UNSUPPORTED, changing nothing and leaving the capture intact: plan creation
 * (so a pool acquire that finds no idle plan: make or warm up plans before capturing), a setpts
 * of a plan with opts.check_points = 1 or of more points than its arrays hold, setpts3,
 * setpts_check, destroy, and the pool release of a plan that ran work outside the capture.
 * Toeplitz operators likewise: warpfft_toeplitz_apply and _apply_spectrum may be captured (the
 * graph then holds the operator); its create, spectrum and destroy refuse during a capture.
 * Plans on the legacy stream refuse while a blocking stream of their context captures.
 *
 * Memory: all arrays passed to setpts/execute are device pointers (cuMemAlloc, cudaMalloc,
 * cupy, torch, warpfft_malloc, ...) on the plan's device. The plan owns its workspace
 * (warpfft_plan_workspace_bytes) and frees it in warpfft_plan_destroy; execute never allocates.
 */
#ifndef WARPFFT_H
#define WARPFFT_H

/* The parts, by topic (each a header of its own under warpfft/): */
#include "warpfft/core.h"        /* versions, statuses, errors, runtime info, device memory */
#include "warpfft/options.h"     /* warpfft_opts and the option table */
#include "warpfft/plan.h"        /* NUFFT plans (types 1, 2, 3), the plan cache */
#include "warpfft/toeplitz.h"    /* the Toeplitz normal operator */
#include "warpfft/pool.h"        /* the live-plan pool: plans and operators per call */
#include "warpfft/oneshot.h"     /* one-call transforms over the pool */
#include "warpfft/diagnostics.h" /* exact sums, FFT timing */

#endif /* WARPFFT_H */
