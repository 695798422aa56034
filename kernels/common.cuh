/*
 * common.cuh — device helpers shared by every warpfft kernel module.
 *
 * - integer types of the ABI (i64, u64, i32),
 * - the working precision (wf_real / wf_cplx, name suffix f32|f64) when WF_PREC is defined,
 * - name pasting for the extern "C" entry points,
 * - the point -> fine-grid mapping, in double, exactly as kernels/ABI.md states it (binning,
 *   spreading and interpolation all call the same function, so they agree bit for bit),
 * - the spreading kernel in the working precision (kernel_shape.h),
 * - periodic wrap helpers and atomics.
 */
#ifndef WF_COMMON_CUH
#define WF_COMMON_CUH

typedef long long i64;
typedef unsigned long long u64;
typedef int i32;

/* ---- name pasting: WF_PASTEn glues n tokens after macro expansion ---- */
#define WF_PASTE8_(a, b, c, d, e, f, g, h) a##b##c##d##e##f##g##h
#define WF_PASTE8(a, b, c, d, e, f, g, h)  WF_PASTE8_(a, b, c, d, e, f, g, h)
#define WF_PASTE4_(a, b, c, d)             a##b##c##d
#define WF_PASTE4(a, b, c, d)              WF_PASTE4_(a, b, c, d)

/* ---- working precision ---- */
#if defined(WF_PREC)
/* -DWF_REAL=1 (spreading/interpolation modules only: kernels/spreadinterp.cu) builds the
 * real-valued variant, whose modules and entry points carry the precision string f32r / f64r
 * (kernels/module_names.h). */
#ifndef WF_REAL
#define WF_REAL 0
#endif
#if WF_PREC == 32
typedef float wf_real;
typedef float2 wf_cplx;
#if WF_REAL
#define WF_PSUF f32r
#else
#define WF_PSUF f32
#endif
#elif WF_PREC == 64
typedef double wf_real;
typedef double2 wf_cplx;
#if WF_REAL
#define WF_PSUF f64r
#else
#define WF_PSUF f64
#endif
#else
#error "WF_PREC must be 32 or 64"
#endif
/* Entry-point name for precision-only modules: WF_PNAME(bin_count) -> wf_bin_count_f32. */
#define WF_PNAME(op) WF_PASTE4(wf_, op, _, WF_PSUF)
#endif

/* 1/(2*pi), rounded to double, and 2*pi as two doubles (hi + lo = 2*pi to ~1e-32) for the
 * Cody-Waite reduction. The same literals as c_core/src/params/grid.c. */
#define WF_INV_2PI 0.15915494309189533576888376337251436
#define WF_2PI_HI  6.283185307179586232
#define WF_2PI_LO  2.4492935982947064e-16
#define WF_MUL_RN(a, b) __dmul_rn(a, b) /* a product that is never contracted into an FMA */

/* ---- point -> fine-grid coordinate (ABI.md, "Point -> fine-grid coordinate") ----
 * u = frac(x / 2pi) * nf in double, u in [0, nf). Every kernel that reads points uses this one
 * function, so a point's bin (prep.cu) and its footprint (spreadinterp.cu) always agree. Points
 * outside [-pi, pi] first lose their whole periods n = rint(x / 2pi) against a two-part 2pi
 * with FMAs (Cody-Waite): r = x - n 2pi is then exact to ~1 ulp of pi for |x| up to ~2^50,
 * where a single double 2pi lost |n| * 2.4e-16 (1e-13 at |x| ~ 3e3). For |x| <= pi, n = 0 and
 * r = x: the same u as a plain x / 2pi. The body is c_core/src/params/grid.c's wf_fold,
 * character for character (test_params_grid.c compares them); the products are WF_MUL_RN so
 * that no FMA contraction can change them between call sites. */
__device__ __forceinline__ double wf_fold(double x, i64 nf) {
    const double n = rint(WF_MUL_RN(x, WF_INV_2PI));
    double r = fma(-n, WF_2PI_HI, x);
    r = fma(-n, WF_2PI_LO, r);
    double u = WF_MUL_RN(r, WF_INV_2PI);
    u = u - floor(u);
    u = WF_MUL_RN(u, (double)nf);
    if (u >= (double)nf)
        u -= (double)nf;
    return u;
}

/* First fine-grid index of the width-w footprint of coordinate u: ceil(u - w/2). */
__device__ __forceinline__ i64 wf_first_index(double u, int w) {
    return (i64)ceil(u - 0.5 * (double)w);
}

/* ---- the spreading kernel (kernel_shape.h: its one definition) ----
 * wf_kshape is the working precision's footprint constants (2/w, beta, e^-beta) and wf_phi(z, k)
 * the kernel's value at offset z, as kernel_shape.h evaluates it in that precision. */
#include "kernel_shape.h"
__device__ __forceinline__ float wf_phi(float z, const wf_kshape_f32 &k) {
    return wf_kshape_phi_f32(z, k);
}
__device__ __forceinline__ double wf_phi(double z, const wf_kshape_f64 &k) {
    return wf_kshape_phi_f64(z, k);
}
__device__ __forceinline__ wf_kshape_f32 wf_kshape_make(int width, float beta) {
    return wf_kshape_make_f32(width, beta);
}
__device__ __forceinline__ wf_kshape_f64 wf_kshape_make(int width, double beta) {
    return wf_kshape_make_f64(width, beta);
}
#if defined(WF_PREC)
#if WF_PREC == 32
typedef wf_kshape_f32 wf_kshape;
#else
typedef wf_kshape_f64 wf_kshape;
#endif
#endif

/* ---- periodic wrap ----
 * Footprint indices lie in [-w/2, nf + w/2) and nf >= 2w (host guarantee), so one add or
 * subtract of nf suffices. */
__device__ __forceinline__ int wf_wrap1(int i, int nf) {
    return i < 0 ? i + nf : (i >= nf ? i - nf : i);
}
__device__ __forceinline__ i64 wf_wrap1(i64 i, i64 nf) {
    return i < 0 ? i + nf : (i >= nf ? i - nf : i);
}
/* For i in [0, any): used for tile cells, where a tile may be wider than the grid. */
__device__ __forceinline__ i64 wf_wrap_up(i64 i, i64 nf) {
    while (i >= nf)
        i -= nf;
    return i;
}

/* Selects a[r] for a run-time r without dynamic register indexing (which would put the array in
 * local memory): W predicated moves. */
template <int W, typename T> __device__ __forceinline__ T wf_pick(const T (&a)[W], int r) {
    T v = a[0];
#pragma unroll
    for (int q = 1; q < W; ++q)
        if (r == q)
            v = a[q];
    return v;
}

/* ---- complex (and real) helpers ---- */
__device__ __forceinline__ float2 wf_ldg(const float2 *p) {
    return __ldg(p);
}
__device__ __forceinline__ double2 wf_ldg(const double2 *p) {
    return __ldg(p);
}
__device__ __forceinline__ float wf_ldg(const float *p) {
    return __ldg(p);
}
__device__ __forceinline__ double wf_ldg(const double *p) {
    return __ldg(p);
}

/* Atomic add of a complex value to a GLOBAL address (the fine grid: the SM tile flush and GM
 * spreading; shared tiles use wf_tile_add). Compiled for sm_90 or newer (__CUDA_ARCH__ >= 900:
 * NVRTC builds, which compile for the GPU present, and PTX made for compute_90), a complex f32
 * is one vector atomic (atom.global.add.v2.f32: one L2 atomic operation per 8-byte cell instead
 * of two); each component is still one IEEE add, so the sums are those of the scalar pair. The
 * compute_75 PTX of jit and aot builds keeps the pair. -DWF_VEC_ATOMIC=0 turns it off for A/B
 * measurements (kernels/check.sh: WF_PTX_ARCH=compute_90). There is no f64 vector atomic. */
#ifndef WF_VEC_ATOMIC
#define WF_VEC_ATOMIC 1
#endif
__device__ __forceinline__ void wf_atomic_add(float2 *p, float re, float im) {
#if WF_VEC_ATOMIC && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(p, make_float2(re, im));
#else
    atomicAdd(&p->x, re);
    atomicAdd(&p->y, im);
#endif
}
__device__ __forceinline__ void wf_atomic_add(double2 *p, double re, double im) {
    atomicAdd(&p->x, re);
    atomicAdd(&p->y, im);
}
/* a real value (the real-valued modules' fine grid) */
__device__ __forceinline__ void wf_atomic_add(float *p, float v) {
    atomicAdd(p, v);
}
__device__ __forceinline__ void wf_atomic_add(double *p, double v) {
    atomicAdd(p, v);
}

/* ---- dynamic shared memory ----
 * WF_DYNAMIC_SMEM(name) declares the kernel's dynamic shared memory as bytes, 16-aligned;
 * wf_dynamic_smem_size() is how many bytes the launch gave (PTX %dynamic_smem_size). Under
 * kernels/test/emu (WF_EMU: the kernels run on a CPU, cuda_emu.h) they are the emulator's. */
#ifndef WF_EMU
#define WF_DYNAMIC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
static __device__ __forceinline__ unsigned wf_dynamic_smem_size() {
    unsigned n;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
    return n;
}
#else
#define WF_DYNAMIC_SMEM(name) unsigned char *name = wf_emu_dynamic_smem()
static __device__ __forceinline__ unsigned wf_dynamic_smem_size() {
    return wf_emu_dynamic_smem_size();
}
#endif

/* Grid-stride loop over [0, n) with 64-bit indices. */
/* a / b for 64-bit operands, as a call: ptxas expands every inline 64-bit division into a long
 * body and schedules each copy, which JIT time pays for (the binning kernels divide once per
 * dimension and point). The callers take a 32-bit path when the operands fit, so this runs only
 * for huge grids. */
static __device__ __noinline__ u64 wf_udiv64(u64 a, u64 b) {
    return a / b;
}

/* a / b for a >= 0, b > 0: one 32-bit division when both fit, else wf_udiv64. */
static __device__ __forceinline__ i64 wf_div(i64 a, i64 b) {
    if (((u64)a | (u64)b) <= 0xffffffffull)
        return (i64)((unsigned)a / (unsigned)b);
    return (i64)wf_udiv64((u64)a, (u64)b);
}

/* Batched point sets (kernels/ABI.md, "Point sets"): the point set of sorted or input position
 * i when n_sets sets of set_M points each lie one after the other; 0 for one set (no
 * division). */
static __device__ __forceinline__ i64 wf_set_of(i64 i, i64 set_M, i64 n_sets) {
    return n_sets > 1 ? wf_div(i, set_M) : 0;
}

#define WF_GRID_STRIDE(i, n)                                                                       \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                              \
         i += (i64)gridDim.x * blockDim.x)

#endif /* WF_COMMON_CUH */
