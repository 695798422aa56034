/*
 * pool.h — the live-plan pool's (api/pool.c) internal seam: what the XLA handler
 * (framework/xla_ffi.c) calls of the pool beyond the public ABI. The pool itself reaches plans
 * only through warpfft.h and plan_pool.h (the plan hooks), so that test_xla_ffi.c can run the
 * handler and the real pool over a recording stand-in of those. Not installed.
 */
#ifndef WARPFFT_POOL_H
#define WARPFFT_POOL_H

#include <stdint.h>

#include "plan_pool.h"
#include "warpfft.h"

/* warpfft_pool_acquire; *created (if not NULL) says whether the plan was made for this call. */
warpfft_status wf_pool_acquire(int type, int dim, const int64_t n_modes[3], int iflag,
                               int64_t ntransf, double tol, warpfft_precision precision,
                               const warpfft_opts *opts, warpfft_plan *plan, int *created);

#endif /* WARPFFT_POOL_H */
