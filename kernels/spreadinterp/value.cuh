/*
 * spreadinterp/value.cuh — the value the kernels spread and interpolate: V, a strength c_j and a
 * fine-grid cell. V = C (complex, the default) or, in the real-valued modules (-DWF_REAL=1,
 * module names f32r / f64r), V = T. Every kernel touches values only through these helpers, so
 * one body serves both: the complex build compiles to the same code as with C written out
 * (each helper is the component-wise expression the kernels had, in the same order), the real
 * build does half the arithmetic and half the memory traffic.
 *
 *   WF_NV                 components of V (2 complex, 1 real)
 *   wf_vzero()            0
 *   wf_vscale(k, v)       k * v, each component (also wf_vscale(v, k): v * k, the operand order
 *                         of the expressions it replaced)
 *   wf_vfma(acc, k, v)    acc += k * v (and wf_vfma(acc, v, k): acc += v * k)
 *   wf_vnonzero(v)        some component != 0
 *   wf_vabs_sum(v)        |re| + |im| (|v| real)
 *   wf_vcomp(v, i)        component i (i a compile-time constant after unrolling)
 *   wf_vatomic_add(p, v)  *p += v, global memory (the fine grid: wf_atomic_add, common.cuh)
 *   wf_vtile_add(p, v)    *p += v, shared memory (the SM tile: float atomics)
 * and wf_ldg (common.cuh) loads either. The team sum of a V is wf_vteam_sum (team.cuh).
 *
 * Part of the spreadinterp.cu translation unit: included there first, after its configuration
 * macros (T, C, V), which it relies on.
 */
#ifndef WF_SI_VALUE_CUH
#define WF_SI_VALUE_CUH

#if WF_REAL
#define WF_NV 1
#else
#define WF_NV 2
#endif

__device__ __forceinline__ V wf_vzero() {
#if WF_REAL
    return (T)0;
#else
    V r;
    r.x = 0;
    r.y = 0;
    return r;
#endif
}

#if WF_REAL
__device__ __forceinline__ V wf_vscale(T k, V v) {
    return k * v;
}
__device__ __forceinline__ void wf_vfma(V &acc, T k, V v) {
    acc += k * v;
}
#else
__device__ __forceinline__ V wf_vscale(T k, const V &v) {
    V r;
    r.x = k * v.x;
    r.y = k * v.y;
    return r;
}
__device__ __forceinline__ V wf_vscale(const V &v, T k) {
    V r;
    r.x = v.x * k;
    r.y = v.y * k;
    return r;
}
__device__ __forceinline__ void wf_vfma(V &acc, T k, const V &v) {
    acc.x += k * v.x;
    acc.y += k * v.y;
}
__device__ __forceinline__ void wf_vfma(V &acc, const V &v, T k) {
    acc.x += v.x * k;
    acc.y += v.y * k;
}
#endif

__device__ __forceinline__ bool wf_vnonzero(const V &v) {
#if WF_REAL
    return v != (T)0;
#else
    return v.x != (T)0 || v.y != (T)0;
#endif
}

__device__ __forceinline__ T wf_vabs_sum(const V &v) {
#if WF_REAL
    return fabs(v);
#else
    return fabs(v.x) + fabs(v.y);
#endif
}

__device__ __forceinline__ T wf_vcomp(const V &v, int i) {
#if WF_REAL
    (void)i;
    return v;
#else
    return i == 0 ? v.x : v.y;
#endif
}

__device__ __forceinline__ void wf_vatomic_add(V *p, const V &v) {
#if WF_REAL
    wf_atomic_add(p, v);
#else
    wf_atomic_add(p, v.x, v.y);
#endif
}

/* Shared-memory float/double atomicAdd compiles to a compare-and-swap loop on sm_90
 * (ATOMS.CAST.SPIN). Measured alternatives — one 64-bit CAS per complex f32 cell, and batched
 * CASes over W cells with a retry pass — were slower for the team and thread variants. */
__device__ __forceinline__ void wf_vtile_add(V *p, const V &v) {
#if WF_REAL
    atomicAdd(p, v);
#else
    atomicAdd(&p->x, v.x);
    atomicAdd(&p->y, v.y);
#endif
}

#endif /* WF_SI_VALUE_CUH */
