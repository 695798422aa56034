/*
 * cuda_emu.h — just enough of CUDA to run warpfft's warp-synchronous kernels on a CPU, for tests
 * on machines without a GPU (kernels/test/emu/run.sh). Include it before a kernel's .cu file,
 * compiled as C++20 with g++.
 *
 * Every thread of a block is a fiber (ucontext) on the calling OS thread; blocks run one after
 * the other. A fiber runs until it reaches a barrier: __syncthreads (the whole block),
 * __syncwarp and the warp collectives (__shfl*_sync, __ballot_sync, __match_any_sync: the 32
 * lanes of its warp named by the mask). The scheduler releases a barrier when every live thread
 * of its group waits at it, and aborts with a message when none can proceed (a barrier that not
 * every thread reaches: a bug the GPU would hang or misbehave on). The schedule is
 * deterministic, and atomics are plain read-modify-writes (one fiber runs at a time).
 * `__shared__` variables become function statics (one block at a time); dynamic shared memory
 * is wf_emu_dynamic_smem() (kernels declare it through WF_EMU). Not emulated: memory-model
 * subtleties beyond the barriers, timing; math functions are the host's (last-bit differences).
 */
#ifndef WF_CUDA_EMU_H
#define WF_CUDA_EMU_H

#include <cmath>
#include <math.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#define WF_EMU 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __align__(n) alignas(n)

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
struct float2 {
    float x, y;
};
struct double2 {
    double x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
struct int4 {
    int x, y, z, w;
};
struct alignas(8) int2 {
    int x, y;
};
struct uint2 {
    unsigned x, y;
};
struct uint4 {
    unsigned x, y, z, w;
};
struct ulonglong2 {
    unsigned long long x, y;
};
inline float2 make_float2(float x, float y) {
    return {x, y};
}
inline double2 make_double2(double x, double y) {
    return {x, y};
}
inline int4 make_int4(int x, int y, int z, int w) {
    return {x, y, z, w};
}
inline uint2 make_uint2(unsigned x, unsigned y) {
    return {x, y};
}
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
    return {x, y, z, w};
}
inline ulonglong2 make_ulonglong2(unsigned long long x, unsigned long long y) {
    return {x, y};
}

namespace wf_emu {
/* the running fiber's coordinates and the launch shape */
extern dim3 cur_thread, cur_block, launch_block, launch_grid;
void sync_block();
/* warp collectives among the lanes of `mask` (each calls with the same mask) */
void sync_warp(unsigned mask);
unsigned long long exchange(unsigned long long mine, int src, unsigned mask); /* lane src's */
unsigned ballot(bool p, unsigned mask);
unsigned match_any(unsigned long long v, unsigned mask);
unsigned char *dynamic_smem();
unsigned dynamic_smem_size();
/* Runs body on every thread of every block of the grid (blocks in order). */
void launch(dim3 grid, dim3 block, size_t dyn_smem, const std::function<void()> &body);
[[noreturn]] void trap(const char *what);
} // namespace wf_emu

#define threadIdx (wf_emu::cur_thread)
#define blockIdx  (wf_emu::cur_block)
#define blockDim  (wf_emu::launch_block)
#define gridDim   (wf_emu::launch_grid)

inline void __syncthreads() {
    wf_emu::sync_block();
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
    wf_emu::sync_warp(mask);
}
inline void __trap() {
    wf_emu::trap("__trap()");
}
inline unsigned char *wf_emu_dynamic_smem() {
    return wf_emu::dynamic_smem();
}
inline unsigned wf_emu_dynamic_smem_size() {
    return wf_emu::dynamic_smem_size();
}

template <class V> inline V wf_emu_shfl(unsigned mask, V v, int src) {
    static_assert(sizeof(V) <= 8, "shuffle of at most 8 bytes");
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof(V));
    b = wf_emu::exchange(b, src, mask);
    V r;
    std::memcpy(&r, &b, sizeof(V));
    return r;
}
template <class V> inline V __shfl_sync(unsigned mask, V v, int src) {
    return wf_emu_shfl(mask, v, src & 31);
}
template <class V> inline V __shfl_up_sync(unsigned mask, V v, unsigned d) {
    const int lane = (int)(threadIdx.x & 31);
    const int src = lane - (int)d;
    const V o = wf_emu_shfl(mask, v, src < 0 ? lane : src);
    return o;
}
template <class V> inline V __shfl_down_sync(unsigned mask, V v, unsigned d) {
    const int lane = (int)(threadIdx.x & 31);
    const int src = lane + (int)d;
    return wf_emu_shfl(mask, v, src > 31 ? lane : src);
}
template <class V> inline V __shfl_xor_sync(unsigned mask, V v, int m) {
    return wf_emu_shfl(mask, v, (int)((threadIdx.x & 31) ^ (unsigned)m));
}
inline unsigned __ballot_sync(unsigned mask, int p) {
    return wf_emu::ballot(p != 0, mask);
}
template <class V> inline unsigned __match_any_sync(unsigned mask, V v) {
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof(V));
    return wf_emu::match_any(b, mask);
}

inline int __popc(unsigned v) {
    return __builtin_popcount(v);
}
inline int __popcll(unsigned long long v) {
    return __builtin_popcountll(v);
}
inline int __ffs(int v) {
    return __builtin_ffs(v);
}
inline int __clz(unsigned v) {
    return v ? __builtin_clz(v) : 32;
}
inline int __clzll(unsigned long long v) {
    return v ? __builtin_clzll(v) : 64;
}
template <class V> inline V __ldg(const V *p) {
    return *p;
}
template <class V> inline V atomicAdd(V *p, V v) {
    const V o = *p;
    *p = o + v;
    return o;
}
template <class V> inline V atomicMax(V *p, V v) {
    const V o = *p;
    *p = o > v ? o : v;
    return o;
}
inline float __fdividef(float a, float b) {
    return a / b;
}
inline double __dmul_rn(double a, double b) {
    return a * b;
}
inline double __dadd_rn(double a, double b) {
    return a + b;
}
inline double __dsub_rn(double a, double b) {
    return a - b;
}
inline void sincospi(double x, double *s, double *c) {
    *s = std::sin(M_PI * x);
    *c = std::cos(M_PI * x);
}
inline int __float2int_rn(float x) {
    return (int)std::nearbyint(x);
}
inline long long __double_as_longlong(double x) {
    long long r;
    std::memcpy(&r, &x, 8);
    return r;
}
inline double __longlong_as_double(long long x) {
    double r;
    std::memcpy(&r, &x, 8);
    return r;
}
inline unsigned __float_as_uint(float x) {
    unsigned r;
    std::memcpy(&r, &x, 4);
    return r;
}
inline float __uint_as_float(unsigned x) {
    float r;
    std::memcpy(&r, &x, 4);
    return r;
}
/* CUDA's integer min/max overloads */
inline int min(int a, int b) {
    return a < b ? a : b;
}
inline int max(int a, int b) {
    return a > b ? a : b;
}
inline long long min(long long a, long long b) {
    return a < b ? a : b;
}
inline long long max(long long a, long long b) {
    return a > b ? a : b;
}
inline unsigned min(unsigned a, unsigned b) {
    return a < b ? a : b;
}
inline unsigned max(unsigned a, unsigned b) {
    return a > b ? a : b;
}
using std::ceil;
using std::exp;
using std::floor;
using std::fma;
using std::isfinite;
using std::rint;
using std::sqrt;

#endif /* WF_CUDA_EMU_H */
