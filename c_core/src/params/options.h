/*
 * options.h — the option table (options.c): one row per field of warpfft_opts, and per option of
 * the reference (cuFINUFFT) that warpfft accepts without effect, with its name, type, default,
 * bounds, the reference's spellings and a line of doc. It is the one place a default or a bound
 * of an option is written: warpfft_opts_default fills the defaults from it, wf_opts_resolve
 * checks a caller's struct against it, warpfft_opts_set checks a value set by name against it,
 * and every front-end (Rust, Python, JAX, PyTorch, the XLA handlers) reads it through the public
 * calls warpfft_opt_count / warpfft_opt_describe / warpfft_opt_find (warpfft.h). The
 * tolerance's range per precision lives here too (wf_tol_bounds, wf_check_tol).
 */
#ifndef WARPFFT_PARAMS_OPTIONS_H
#define WARPFFT_PARAMS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "warpfft.h"

/* A row: warpfft_opt_desc's members, and whether the field began a version of the struct (its
 * offset is then the struct_size of the header before it, which plan creation accepts). */
typedef struct wf_opt {
    const char *name, *aliases, *values, *doc;
    int type;       /* warpfft_opt_type */
    unsigned flags; /* WARPFFT_OPT_FLAG_* */
    int offset;     /* in warpfft_opts; -1: no field (NO_EFFECT) */
    int appended;   /* 1: appended to the struct after its first version */
    int64_t idef, imin, imax, iref;
    double fdef, fmin, fmax, fref;
} wf_opt;

size_t wf_opt_count(void);
/* Row i (i < wf_opt_count()). */
const wf_opt *wf_opt_at(size_t i);
/* The row named `name` or with `name` among its aliases; NULL when none (or name NULL). */
const wf_opt *wf_opt_find(const char *name);

/* Every field at its table default; struct_size = sizeof *o. */
void wf_opts_defaults(warpfft_opts *o);
/* opts NULL -> the defaults into *out; else a checked copy: struct_size one this build accepts
 * (an older header's, this one's, or a newer one's with every unknown byte zero), then every
 * field against its row (the first bad one's message, as warpfft_opts_set gives it). */
warpfft_status wf_opts_resolve(const warpfft_opts *opts, warpfft_opts *out);

/* The tolerance range of a precision (f32 [1e-6, 0.1], f64 [1e-13, 0.1]). */
void wf_tol_bounds(int precision, double *lo, double *hi);
/* *tol -> the tolerance a plan runs at (warpfft_tol_effective: clamped into the range); NaN:
 * WARPFFT_ERR_BAD_TOL with a message. */
warpfft_status wf_check_tol(double *tol, int precision);

#endif /* WARPFFT_PARAMS_OPTIONS_H */
