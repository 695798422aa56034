/*
 * test_xla_ffi.h — what the parts of the XLA FFI handlers' test share:
 *   test_xla_ffi_standin.c  the recording stand-in of the C ABI and of the plan hooks the
 *                           live-plan pool calls (api/plan_pool.h), XLA's API table, call frames;
 *   test_xla_standin_toeplitz.c  the same for the Toeplitz operator's calls and hooks;
 *   test_xla_ffi.c          main; whole calls, empty calls, decoding edges, each call failing;
 *   test_xla_ffi_pool.c     the handler over the pool: a clear during a call, no call waiting
 *                           behind another's plan creation or plan destruction, no stream
 *                           synchronised at eviction, empty arrays with huge dimensions;
 *   test_xla_toeplitz.c     the Toeplitz handlers: their calls, malformed frames, each call
 *                           failing, their operators in the pool (no stream synchronised).
 * The handlers (xla_ffi.c, xla_toeplitz.c) and the real pool (pool.c) are linked with them; no
 * driver, no GPU.
 */
#ifndef WARPFFT_TEST_XLA_FFI_H
#define WARPFFT_TEST_XLA_FFI_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "framework/xla_ffi.h"

/* ---- the recording stand-in: every call appends a line to `trace` ---- */

extern char trace[8192];
extern long calls; /* numbered calls since arm() */
/* Appends a line to the trace; numbers a call, 1 when it is the one to fail (then traced as
 * failing, its message the last error). */
void record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tick(const char *fn);
/* Where p lies: "name+offset" in buffer i of the frame (buf_name[i], at buf_base(i), for i <
 * n_bufs), "-" for NULL, "?" elsewhere. */
extern const char *buf_name[8];
extern int n_bufs;
uintptr_t buf_base(int i);
const char *where(const void *p, char *s, size_t len);
/* Waits in a call armed by block_arm (below). */
void maybe_block(const char *fn);
extern char failed_fn[48];       /* the one that failed */
extern int plan_ids, plans_live; /* plans made so far, and not destroyed */
/* Resets the trace and the call count; the k-th numbered call (0: none) fails with st. */
void arm(long k, warpfft_status st);
/* Called at the start of the stand-in's warpfft_setpts / setpts3, when set (by the thread that
 * runs the handler; NULL: nothing). */
extern void (*on_setpts)(void);
/* The stand-in's warpfft_setpts_sets / setpts3_sets return WARPFFT_ERR_BAD_SIZE (too many bins
 * for the sets) when set. */
extern int sets_refuse;
/* The stand-in GPU's memory: a plan holds PLAN_BYTES_PER_TRANSFORM per transform (its fine
 * grids) from its creation, and SETS_BYTES_PER_SET per point set from its warpfft_setpts_sets on
 * (kept until its destruction); creation and set-points return WARPFFT_ERR_OUT_OF_MEMORY beyond
 * mem_budget (0: no limit). mem_live: the bytes held now. */
enum { PLAN_BYTES_PER_TRANSFORM = 1000, SETS_BYTES_PER_SET = 500 };
extern int64_t mem_budget, mem_live;
/* The deterministic attribute frame() gives calls (1 by default). The handler runs groups with
 * their own points as one plan with batched points unless the plan spreads by OD (deterministic
 * types 1 and 3). */
extern int frame_det;

/* Blocking a thread inside the C ABI: block_arm(fn) makes the next call of `fn` ("create" for
 * warpfft_plan_create, "destroy" for any destruction: the pool's wf_plan_destroy_fenced or
 * warpfft_plan_destroy, and warpfft_stream_sync) wait until block_release; block_wait_entered
 * waits (at most ms) until a thread is waiting there: 1 when one is. */
void block_arm(const char *fn);
int block_wait_entered(int ms);
void block_release(void);

/* ---- XLA's side ---- */

extern char xla_error_token, stream_error_token; /* XLA_FFI_Error* values the handler returns */
extern int xla_errc;
extern char xla_msg[1600];
/* XLA's API table: errors recorded in xla_errc and xla_msg; the stream (a traced, numbered call)
 * 0x5150. */
void xla_api(XLA_FFI_Api *api);
/* The live-plan pool's handles now, idle and busy (warpfft_pool_get_info). */
int64_t pool_size(void);

typedef struct config {
    int type, dim;
    warpfft_precision precision;
    int64_t G, Gp, T, M, K; /* K: type 3's targets */
    int64_t n[3];           /* types 1, 2: modes, C order (n[0] is the last axis) */
} config;

enum { N_ATTRS = 8 };

/* One call frame with everything it points to (one per thread that calls the handler). */
typedef struct frame_store {
    XLA_FFI_CallFrame f;
    XLA_FFI_Api api;
    XLA_FFI_Buffer buf[8]; /* the arguments, then the result */
    int64_t dims[8][5];
    void *args[7], *rets[1];
    int arg_types[7], ret_types[1];
    XLA_FFI_ByteSpan names[N_ATTRS], *name_ptrs[N_ATTRS];
    XLA_FFI_Scalar scalars[N_ATTRS];
    void *attr_ptrs[N_ATTRS];
    int attr_types[N_ATTRS];
    int64_t ivals[N_ATTRS];
    double eps;
    warpfft_opts opts; /* the record attribute opts carries (last: size - 1 drops it) */
    XLA_FFI_ByteSpan opts_span;
    char opts_hex[2 * sizeof(warpfft_opts) + 1];
} frame_store;

/* The frame of `cf` in fs: buffer i at fake device address (i + 1) MiB (the trace names it),
 * attributes with values the plan's key must carry through (iflag -1, eps 1e-5, and in the
 * options record modeord 1, method 2, bins 4 5 6, max_subprob 7, upsampfac 1.25, deterministic
 * frame_det); XLA's stream is 0x5150. */
XLA_FFI_CallFrame *frame_at(frame_store *fs, const config *cf);
/* Buffer i of fs: `name` (the trace's), at fake device address (i + 1) MiB; scalar attribute i;
 * the frame completed: buffers 0..nargs-1 the arguments, buffer nargs the result, attributes
 * 0..n_attrs-1 and then opts (fs->opts in hex), XLA's API table. */
void set_buffer(frame_store *fs, int i, const char *name, int dtype, int rank, const int64_t *dims);
void set_attr(frame_store *fs, int i, const char *name, int dtype, void *value);
void frame_finish(frame_store *fs, int nargs, int n_attrs);
/* fs->opts as the hex of attribute opts again (after a change to fs->opts). */
void frame_opts(frame_store *fs);
/* frame_at on one store of the main thread. */
XLA_FFI_CallFrame *frame(const config *cf);
const char *describe(const config *cf, char *s, size_t len);

/* ---- test_xla_standin_toeplitz.c: operators made so far, and not destroyed ---- */
extern int op_ids, ops_live;

/* ---- test_xla_toeplitz.c ---- */
void test_toeplitz_spectrum(void);
void test_toeplitz_apply(void);
void test_toeplitz_pool(void);

/* ---- test_xla_ffi_pool.c ---- */
void test_clear_during_call(void);
void test_no_waiting_behind_create(void);
void test_no_waiting_behind_destroy(void);
void test_eviction_syncs_no_stream(void);
void test_empty_huge(void);

#endif /* WARPFFT_TEST_XLA_FFI_H */
