/*
 * spreadinterp.cu — modules si_{d}d_{p}_w{w}_spread (spreading, type 1) and
 * si_{d}d_{p}_w{w}_interp (interpolation, type 2) with the kernel of kernel_shape.h, width w, one
 * module per (dimension, precision, width, direction) so that w is a compile-time constant
 * (-DWF_DIM=1|2|3 -DWF_PREC=32|64 -DWF_W=2..16 -DWF_SI_PART=WF_SI_SPREAD|WF_SI_INTERP). A plan
 * needs one direction only: it JITs (jit builds) or loads (aot) half the code. kernels/ABI.md,
 * "Modules si_{d}d_p_w{w}_spread and _interp", is the contract; README.md explains the choices.
 *
 * Three ways to map work onto lanes, chosen per kernel by the WF_* macros below (defaults
 * measured on an H100 with suite B; the others stay selectable for re-measuring):
 *  - thread per point: a lane computes its point's W kernel values per dimension once (in
 *    registers) and walks the whole footprint. Used for interpolation (all dims) and 1D SM
 *    spreading, where the per-point setup (fold, exp) must be amortised over many cells. Point
 *    data are fetched one iteration ahead to overlap the random gathers.
 *  - team per point: W consecutive lanes share a point, lane q owning footprint column q
 *    (dim 1) and computing the dim-2/3 kernel values of index q, which team mates fetch with
 *    a shuffle. Every memory instruction of a team touches W consecutive cells: 1-2 cache
 *    lines (global atomics) and distinct banks with no two lanes on one cell (shared tile).
 *    Used for GM spreading and 2D f32 SM spreading.
 *  - output-driven (cell per thread): the block takes points one step at a time, each thread
 *    owning fixed cells of the footprint, and adds with plain loads/stores; no atomics at all.
 *    Used for 3D SM spreading (W^3 cells keep a 256-thread block busy): 3D f32 w6 went from
 *    22 ms (thread per point) and 15 ms (team) to 4.8 ms, 3D f64 w10 from 320 ms to 34 ms;
 *    and for 2D f64 SM spreading, several points per step (wf_spread_sm_od2): w11 9.0 -> 5.7 ms.
 *  - column per thread (the SM tile in registers, smr_spread.cuh): a thread owns all cells of
 *    one tile column along the last dimension and adds a point's W of them with FMAs into its
 *    registers; no shared cell traffic, no atomics. Used for 3D f64 SM spreading at w7-14 and
 *    2D f64 at w10-16 (kernels/smr_shape.h): B7 w10 47.2 -> 26.1 ms, B6 w10 5.24 -> 4.55.
 * Shared-memory float atomicAdd is a compare-and-swap loop on sm_90 (ATOMS.CAST.SPIN), which
 * is why avoiding shared atomics pays off so much.
 *
 * Unrolling: only the innermost loop over one footprint dimension is unrolled; outer loops are
 * `#pragma unroll 1` (unrolling all three of a 3D w=16 kernel took nvcc > 10 minutes). Kernel
 * values an outer loop needs are computed in it (one per iteration: the same count as
 * precomputing), except dim 2 of 3D thread-per-point, which every plane revisits: those stay
 * in registers and are selected with W predicated moves (wf_pick), since a run-time index into
 * a register array would move it to local memory.
 *
 * Files: this is the modules' one translation unit. It holds the configuration (the variant
 * macros and register caps below) and the extern "C" entry points at the end (those of
 * WF_SI_PART); the device code lives in spreadinterp/, included in this order (each piece uses
 * the ones before it; tile, gm_spread and sm_spread for spreading only, gm_interp and sm_interp
 * for interpolation only):
 *   point.cuh      per point: wf_pts, coordinate fold and footprint start, kernel values,
 *                  point data loaded one iteration ahead
 *   subprob.cuh    SM subproblem geometry: its points, tile origin and extents, tile cell -> grid
 *   tile.cuh       the shared tile: atomic adds (fixed point for 2D f32), flushes into fw
 *   team.cuh       teams of W lanes per point (GM and SM)
 *   gm_spread.cuh  GM spreading: thread / team per point
 *   gm_interp.cuh  GM interpolation: thread / team per point
 *   sm_spread.cuh  SM spreading: thread / team per point, output-driven (3D; 2D several points)
 *   sm_interp.cuh  SM interpolation: thread / team per point
 *   smr_spread.cuh SM spreading with the tile in registers (WF_SPREAD_SM_REG: 3D f64 w7-14,
 *                  2D f64 w10-16, kernels/smr_shape.h)
 */
#include "common.cuh"

#if !defined(WF_DIM) || !defined(WF_PREC) || !defined(WF_W)
#error "spreadinterp.cu needs -DWF_DIM=1|2|3 -DWF_PREC=32|64 -DWF_W=<width>"
#endif
#if WF_DIM < 1 || WF_DIM > 3
#error "WF_DIM must be 1, 2 or 3"
#endif
#if WF_W < 2 || WF_W > 16
#error "WF_W must be in 2..16"
#endif
/* Which entry points the module holds: -DWF_SI_PART=WF_SI_SPREAD (wf_spread_gm/sm, module
 * si_..._spread) or WF_SI_INTERP (wf_interp_gm/sm, module si_..._interp). */
#define WF_SI_SPREAD 1
#define WF_SI_INTERP 2
#if !defined(WF_SI_PART) || (WF_SI_PART != WF_SI_SPREAD && WF_SI_PART != WF_SI_INTERP)
#error "spreadinterp.cu needs -DWF_SI_PART=WF_SI_SPREAD or -DWF_SI_PART=WF_SI_INTERP"
#endif
/* and which method: -DWF_SI_METHOD=WF_SI_GM (module si_..._gm), WF_SI_SM (si_..._sm) or WF_SI_OD
 * (si_..._spread_od: output-driven spreading, spreadinterp/od_spread.cuh; spreading only). A
 * plan's method is fixed when it is made and it launches one kernel, so it JIT-compiles (jit) or
 * loads (aot) that one only: the driver JIT-compiles one module at a time, and every kernel
 * compiled that the plan does not launch is first-plan time (issue 12). */
#define WF_SI_GM 1
#define WF_SI_SM 2
#define WF_SI_OD 3
#if !defined(WF_SI_METHOD) ||                                                                      \
    (WF_SI_METHOD != WF_SI_GM && WF_SI_METHOD != WF_SI_SM && WF_SI_METHOD != WF_SI_OD)
#error "spreadinterp.cu needs -DWF_SI_METHOD=WF_SI_GM, WF_SI_SM or WF_SI_OD"
#endif
#if WF_SI_METHOD == WF_SI_OD && WF_SI_PART != WF_SI_SPREAD
#error "WF_SI_OD is a spreading method (-DWF_SI_PART=WF_SI_SPREAD)"
#endif

/* wf_<op>_<d>d_<p>_w<w>, e.g. wf_spread_sm_2d_f32_w6 */
#define WF_SINAME(op) WF_PASTE8(wf_, op, _, WF_DIM, d_, WF_PSUF, _w, WF_W)

typedef wf_real T;
typedef wf_cplx C;
/* The value spread and interpolated (strengths c, fine-grid cells fw): complex, or real in the
 * real-valued modules (-DWF_REAL=1: modules si_{d}d_f32r_... / f64r, entry points
 * wf_..._{d}d_f32r_w{w}; spreadinterp/value.cuh). */
#if WF_REAL
typedef T V;
#else
typedef C V;
#endif

#define W WF_W
/* tile padding each side (ABI.md) */
#define PAD ((WF_W + 1) / 2)
/* point teams per warp (team variant) */
#define WF_TEAMS (32 / WF_W)

/* Variant per kernel: 1 = team per point, 0 = thread per point (see the top of the file). */
#ifndef WF_SPREAD_GM_TEAM
#define WF_SPREAD_GM_TEAM 1
#endif
#ifndef WF_INTERP_GM_TEAM
#define WF_INTERP_GM_TEAM 0
#endif
#ifndef WF_SPREAD_SM_TEAM
#define WF_SPREAD_SM_TEAM (WF_DIM >= 2)
#endif
/* SM spread output-driven (cell per thread, no atomics; overrides WF_SPREAD_SM_TEAM) */
#ifndef WF_SPREAD_SM_OD
#define WF_SPREAD_SM_OD (WF_DIM == 3)
#endif
/* Threads per block of 3D SM spreading (cell per thread, wf_spread_sm_od): its minimum, from
 * which the passes over a point's W^3 cells are counted; the host launches exactly this many
 * (wf_sm_spread_block, c_core/src/params/bins.c, holds the same table). Fewer threads keep more
 * blocks resident and a barrier holds fewer warps; more than the cells need was slower in every
 * case. Measured on the H100 (kernels alone, gpu_test.py bench smblock=, M = 1e7 uniform, 128^3
 * modes, sigma 2, 16x8x4 bins):
 *  - f32 w7 (343 cells): 192 threads 7.62 ms spread, 256 8.93, 128 7.93 (at 64 registers), 352
 *    10.9, 512 15.5; in the C core (suite_b, one H200 call) B4 9.40 -> 8.13 ms, R3t1 9.23 ->
 *    7.99, C3t1 9.69 -> 8.53;
 *  - f32 w8 (512 cells): 256 8.31, 192 8.79;
 *  - f64 w7, w8: no faster at 128 or 192; w10 at 128 was 10% faster alone (8x8x2 bins, 0.6
 *    points per cell) but not in the C core: B7 56.1 ms at 128 with 8x8x2 bins (H200) against
 *    55.5 at 256 with 8x8x4 (H100), D1t1 33.6 against 23.7. f64 keeps 256. */
#ifndef WF_OD_MIN_BLOCK
#if WF_DIM == 3 && WF_PREC == 32 && WF_W == 7
#define WF_OD_MIN_BLOCK 192
#else
#define WF_OD_MIN_BLOCK 256
#endif
#endif
/* 3D f64 SM interp: team per point measured faster (H100, B8 w11, 8x8x4 bins: 17.1 vs 20.7 ms;
 * 8x8x2: 19.4 vs 22.1); 3D f32 w7 slower (3.0 vs 2.8 ms at 16x16x4), 2D f32 w7 much slower.
 * Narrow f64 widths (unmeasured) keep thread per point: a team of W < 8 wastes lanes. */
#ifndef WF_INTERP_SM_TEAM
#define WF_INTERP_SM_TEAM (WF_DIM == 3 && WF_PREC == 64 && WF_W >= 8)
#endif
/* 2D SM spread output-driven with several points per step (see wf_spread_sm_od2). Measured on
 * the H100 (kernels alone, suite B, 32x32 bins): f64 w11 (B6) 8.98 -> 5.68 ms against the
 * team; f32 w7 2.53 -> 2.60 ms (B2, slower) and 2.30 -> 2.26 (B9), so f32 keeps the team.
 * Other f64 widths are unmeasured (the team's 64-bit CAS loops are what it removes). */
#ifndef WF_SPREAD_SM_OD2
#define WF_SPREAD_SM_OD2 (WF_DIM == 2 && WF_PREC == 64)
#endif
/* 2D f32 SM spread (team) in fixed point: shared-memory integer atomicAdd is one native
 * instruction, the float one a compare-and-swap loop (see wf_tile_add). Each component is
 * split into a high and a low int32 word (wf_fix_add), so no precision is lost. Measured on the
 * H100 (suite B, w6, 32x32 bins): B2 2.05 -> 1.43 ms, B9 1.56 -> 1.04 ms, errors unchanged
 * (5.85e-6). Variants measured and left: one int32 word scaled by the subproblem's sum of
 * strengths, 1.14 ms but 1.4e-6 more error (the scale must cover every point landing on one
 * cell); the same scaled 16x tighter with overflow detection and a redo, 1.17 ms, a
 * data-dependent slow path; int64 words, 2.63 ms (64-bit shared atomics are CAS loops too);
 * the owner-cell path (WF_SPREAD_SM_OD2), 2.45 ms. */
/* 1D f32 (thread per point) likewise: its float atomics were the same CAS loops. */
#ifndef WF_SPREAD_SM_FIX
#define WF_SPREAD_SM_FIX (WF_DIM <= 2 && WF_PREC == 32 && !WF_SPREAD_SM_OD2)
#endif
#if WF_SPREAD_SM_FIX && !(WF_PREC == 32 && (WF_DIM <= 2 || !WF_SPREAD_SM_OD))
#error "WF_SPREAD_SM_FIX is for f32 (in 3D with -DWF_SPREAD_SM_OD=0: the team in fixed point)"
#endif
#if WF_SPREAD_SM_OD2 && WF_DIM != 2
#error "WF_SPREAD_SM_OD2 is for WF_DIM == 2"
#endif
/* SM spreading with the tile in registers (spreadinterp/smr_spread.cuh): the default of the
 * spreading SM modules that kernels/smr_shape.h lists (3D f64 w7-14, 2D f64 w10-16; the H100
 * measurements and the reasons for each width are there), and a variant of the others for
 * re-measuring (-DWF_SPREAD_SM_REG=1; kernels/test/sweep_wave4.sh). Replaces the shared-tile
 * paths above when on (-DWF_SPREAD_SM_REG=0 builds the shared tile of a listed module):
 *  - WF_SMR_NR: registers (complex cells) per thread along the last dimension; the tile's last
 *    extent bs_last + 2*PAD must fit (the host's bins follow: bs_last = NR - 2*PAD). The
 *    table's, else (variant builds) a last bin extent of 4 in 3D, 6 in 2D;
 *  - WF_SMR_PX: 3D column mapping, 0 = flat rows, 8 or 16 = warp patches PX x 32/PX (the host
 *    launches flat rows: the listed modules are f64);
 *  - WF_SMR_NBW: points per batch / 32, the table's (else 1). */
#include "smr_shape.h"
#define WF_SMR_NR_TABLE WF_SMR_NR_OF(WF_DIM, WF_PREC, WF_W)
#ifndef WF_SPREAD_SM_REG
#define WF_SPREAD_SM_REG                                                                           \
    (WF_SI_PART == WF_SI_SPREAD && WF_SI_METHOD == WF_SI_SM && WF_SMR_NR_TABLE > 0)
#endif
#if WF_SPREAD_SM_REG
#if WF_DIM < 2
#error "WF_SPREAD_SM_REG is for 2D and 3D"
#endif
#ifndef WF_SMR_NR
#if WF_SMR_NR_TABLE > 0
#define WF_SMR_NR WF_SMR_NR_TABLE
#elif WF_DIM == 3
/* bs3 = 4, the depth of the shared tile's 3D bins (f32 type 1 16x8x4, f64 8x8x4) */
#define WF_SMR_NR (4 + 2 * PAD)
#else
#define WF_SMR_NR (6 + 2 * PAD) /* bs2 = 6 */
#endif
#endif
#ifndef WF_SMR_PX
#define WF_SMR_PX (WF_DIM == 3 && WF_PREC == 32 ? 8 : 0)
#endif
#ifndef WF_SMR_NBW
#define WF_SMR_NBW (WF_SMR_NR_TABLE > 0 ? WF_SMR_NBW_OF(WF_DIM, WF_PREC, WF_W) : 1)
#endif
#undef WF_SPREAD_SM_OD
#define WF_SPREAD_SM_OD 0
#undef WF_SPREAD_SM_OD2
#define WF_SPREAD_SM_OD2 0
#undef WF_SPREAD_SM_FIX
#define WF_SPREAD_SM_FIX 0
#endif
/* Register cap for SM spreading (__maxnreg__, so that 256-thread blocks fit 64K / (256 * cap)
 * per SM): only SM spreading measured faster with more resident blocks (H100, suite B: 3D f32
 * w6 6.2 -> 4.7 ms at 40 registers = 6 blocks). A register cap rather than
 * __launch_bounds__(256, minBlocks): the PTX's .minnctapersm is out of range on sm_75 (1024
 * threads per SM) and the two cannot be combined. The values keep sm_90 free of spills
 * (kernels/check.sh); 0 = no cap (then __launch_bounds__(256)). */
#ifndef WF_SPREAD_SM_MAXREG
#if WF_SPREAD_SM_REG
/* the NR complex registers and ~30 more (smr_shape.h: the host sizes blocks by it); blocks
 * of more than 256 threads need a cap (not __launch_bounds__(256)) */
#define WF_SPREAD_SM_MAXREG WF_SMR_MAXREG_OF(WF_PREC, WF_SMR_NR)
#elif WF_SPREAD_SM_OD && WF_DIM == 3 && WF_PREC == 32
/* w7 spills 8 bytes at 48 since the sinh kernel (one more register: eb) */
#define WF_SPREAD_SM_MAXREG                                                                        \
    (WF_W <= 6 ? 40 : WF_W == 7 ? 56 : WF_W <= 8 ? 48 : WF_W <= 10 ? 64 : 80)
#elif WF_SPREAD_SM_OD && WF_DIM == 3
#define WF_SPREAD_SM_MAXREG (WF_W <= 8 ? 64 : 128)
#elif WF_SPREAD_SM_OD2
#define WF_SPREAD_SM_MAXREG (WF_PREC == 32 ? 48 : 64)
#elif WF_SPREAD_SM_TEAM && !WF_SPREAD_SM_OD && WF_DIM == 2
/* 2D f32 (fixed point) w8 spills 4 bytes at 48 */
#define WF_SPREAD_SM_MAXREG (WF_PREC == 32 ? (WF_W == 8 ? 56 : 48) : WF_W <= 12 ? 64 : 80)
#else
#define WF_SPREAD_SM_MAXREG 0
#endif
#endif
#if WF_SPREAD_SM_MAXREG > 0
#define WF_SPREAD_SM_BOUNDS __maxnreg__(WF_SPREAD_SM_MAXREG)
#else
#define WF_SPREAD_SM_BOUNDS __launch_bounds__(256)
#endif
#ifndef WF_INTERP_SM_MINB
#define WF_INTERP_SM_MINB 1
#endif
/* Register cap for SM interpolation (0 = none: __launch_bounds__(256, WF_INTERP_SM_MINB)).
 * 3D f32 thread per point at 64 registers (4 blocks of 256 per SM instead of 3): H100, B5 w7
 * 16x16x4 bins, interp 2.81 -> 2.75 ms. */
#ifndef WF_INTERP_SM_MAXREG
#define WF_INTERP_SM_MAXREG                                                                        \
    (WF_DIM == 3 && WF_PREC == 32 && WF_W <= 8 && !WF_INTERP_SM_TEAM ? 64 : 0)
#endif
#if WF_INTERP_SM_MAXREG > 0
#define WF_INTERP_SM_BOUNDS __maxnreg__(WF_INTERP_SM_MAXREG)
#else
#define WF_INTERP_SM_BOUNDS __launch_bounds__(256, WF_INTERP_SM_MINB)
#endif
#ifndef WF_GM_MINB
#define WF_GM_MINB 1
#endif

/* ------------------------------------------------------------------------------------------ */
/* the device code, in order (each piece uses the ones before it)                              */

#include "spreadinterp/value.cuh"
#include "spreadinterp/point.cuh"
#include "spreadinterp/subprob.cuh"
#if WF_SI_METHOD == WF_SI_OD
#include "scan.cuh"
#include "spreadinterp/od_spread.cuh"
#else
#if WF_SI_PART == WF_SI_SPREAD
#include "spreadinterp/tile.cuh"
#endif
#include "spreadinterp/team.cuh"
#if WF_SI_PART == WF_SI_SPREAD
#include "spreadinterp/gm_spread.cuh"
#include "spreadinterp/sm_spread.cuh"
#if WF_SPREAD_SM_REG
#include "spreadinterp/smr_spread.cuh"
#endif
#else
#include "spreadinterp/gm_interp.cuh"
#include "spreadinterp/sm_interp.cuh"
#endif
#endif

/* ------------------------------------------------------------------------------------------ */
/* entry points                                                                                */

/* The width the points took (kernels/ABI.md, "Widths from the points"): a plan that may
 * spread with several widths launches each width's kernel, and every block of those but the one
 * *w_sel names (by its index w_idx among the plan's widths) returns at once. NULL: one width. */
#define WF_WIDTH_SELECTED(w_sel, w_idx) (!(w_sel) || __ldg(w_sel) == (w_idx))

#define WF_PTS_INIT                                                                                \
    wf_pts P;                                                                                      \
    P.x = x;                                                                                       \
    P.y = y;                                                                                       \
    P.z = z;                                                                                       \
    P.nf1 = nf1;                                                                                   \
    P.nf2 = nf2;                                                                                   \
    P.nf3 = nf3;                                                                                   \
    P.K = wf_kshape_make(W, beta)

/* The subproblem count setpts left on the device (already clamped to the capacity the host
 * sized subprob_bin and the grid for); blocks past it return at once. Read in the loop
 * condition (a cached load per subproblem) rather than kept in a register for the kernel's
 * life: 2D f32 w12 spread SM spilled 4 bytes at its 48-register cap with the latter. */
#define WF_N_SUBPROB(p) ((i64)(unsigned)__ldg(p)) /* < 2^31 (ABI) */

/* Point sets in the SM kernels (ABI.md, "Point sets"): block (x, y, z) runs the subproblems of
 * set z -- from the first subproblem of the set's first bin, nsub_start[z * nbins], while the
 * subproblem's bin is in set z (the sets' subproblems follow each other) -- and the set's
 * transforms z*tps + t, t = y, y + gridDim.y, .. < tps, whose values are
 * c[(z*tps + t) * set_M + sort_idx[i]] (sort_idx: the index within the set). The set is
 * blockIdx.z, a special register, and the loop's bounds are loads in its condition: nothing per
 * set lives in registers across the loops (the SM kernels' register caps have no room for it).
 * One set: gridDim.z = 1, the subproblems 0 .. *n_subprob, transforms t, values c + t*M. */
#define WF_SET_NBINS ((unsigned)(nb1 * nb2 * nb3)) /* < 2^31 (ABI) */
#define WF_SET_SUBPROBS(s)                                                                         \
    for (i64 s = (blockIdx.z == 0 ? 0 : (i64)__ldg(nsub_start + (i64)blockIdx.z * WF_SET_NBINS)) + \
                 blockIdx.x;                                                                       \
         s < WF_N_SUBPROB(n_subprob_p) &&                                                          \
         (gridDim.z == 1 || (unsigned)__ldg(subprob_bin + s) / WF_SET_NBINS == blockIdx.z);        \
         s += gridDim.x)
/* The set's transforms: t runs over T = z*tps + blockIdx.y, .. (WF_SM_SET_T = 1: the loop
 * variable is T itself, its bound recomputed from blockIdx.z) or over the set's own index t <
 * tps with T formed where used (0). The same work; which one a kernel's register cap takes
 * without spilling differs (kernels/check.sh): 3D f64 spreading the first, the rest the
 * second. */
#ifndef WF_SM_SET_T
#define WF_SM_SET_T (WF_SI_PART == WF_SI_SPREAD && WF_DIM == 3 && WF_PREC == 64)
#endif
#if WF_SM_SET_T
#define WF_SET_TRANSFORMS(T)                                                                       \
    for (i64 T = (i64)blockIdx.z * tps + blockIdx.y; T < ((i64)blockIdx.z + 1) * tps;             \
         T += gridDim.y)
#define WF_SET_T(T) (T)
#else
#define WF_SET_TRANSFORMS(t) for (i64 t = blockIdx.y; t < tps; t += gridDim.y)
#define WF_SET_T(t)          ((i64)blockIdx.z * tps + (t))
#endif

#define WF_BINS_INIT                                                                               \
    wf_bins B;                                                                                     \
    B.bs1 = bs1;                                                                                   \
    B.bs2 = bs2;                                                                                   \
    B.bs3 = bs3;                                                                                   \
    B.nb1 = nb1;                                                                                   \
    B.nb2 = nb2;                                                                                   \
    B.nb3 = nb3;                                                                                   \
    B.bin_start = bin_start;                                                                       \
    B.bin_count = bin_count;                                                                       \
    B.nsub_start = nsub_start;                                                                     \
    B.subprob_bin = subprob_bin;                                                                   \
    B.maxsub = maxsub

#if WF_SI_PART == WF_SI_SPREAD && WF_SI_METHOD == WF_SI_GM
extern "C" __global__ void __launch_bounds__(256, WF_GM_MINB)
    WF_SINAME(spread_gm)(i64 M, const T *__restrict__ x, const T *__restrict__ y,
                         const T *__restrict__ z, const V *__restrict__ c, i64 nf1, i64 nf2,
                         i64 nf3, i64 ntransf, const i64 *__restrict__ sort_idx, T beta,
                         V *__restrict__ fw, i64 set_M, i64 tps, const i32 *w_sel, i32 w_idx) {
    if (!WF_WIDTH_SELECTED(w_sel, w_idx))
        return;
    WF_PTS_INIT;
    const wf_sets S = wf_sets_of(M, set_M, tps);
#if WF_SPREAD_GM_TEAM
    wf_spread_gm_team(M, P, c, S, sort_idx, fw);
#else
    wf_spread_gm_thread(M, P, c, S, sort_idx, fw);
#endif
}
#endif

#if WF_SI_PART == WF_SI_INTERP && WF_SI_METHOD == WF_SI_GM
extern "C" __global__ void __launch_bounds__(256, WF_GM_MINB)
    WF_SINAME(interp_gm)(i64 M, const T *__restrict__ x, const T *__restrict__ y,
                         const T *__restrict__ z, V *__restrict__ c, i64 nf1, i64 nf2, i64 nf3,
                         i64 ntransf, const i64 *__restrict__ sort_idx, T beta,
                         const V *__restrict__ fw, i64 set_M, i64 tps, const i32 *w_sel,
                         i32 w_idx) {
    if (!WF_WIDTH_SELECTED(w_sel, w_idx))
        return;
    WF_PTS_INIT;
    const wf_sets S = wf_sets_of(M, set_M, tps);
#if WF_INTERP_GM_TEAM
    wf_interp_gm_team(M, P, c, S, sort_idx, fw);
#else
    wf_interp_gm_thread(M, P, c, S, sort_idx, fw);
#endif
}
#endif

#if WF_SI_PART == WF_SI_SPREAD && WF_SI_METHOD == WF_SI_SM
#if WF_SPREAD_SM_FIX && WF_DIM == 3
/* the 3D fixed-point variant's tile has 16-byte cells (8 in the real modules): a harness
 * sizes the launch by this mark */
extern "C" __device__ const int wf_sm_fix3 = 1;
#endif
/* SM spread: per subproblem and transform, zero the tile, add the points, flush the tile into
 * fw (wf_tile_flush). */
extern "C" __global__ void WF_SPREAD_SM_BOUNDS WF_SINAME(spread_sm)(
    i64 M, const T *__restrict__ x, const T *__restrict__ y, const T *__restrict__ z,
    const V *__restrict__ c, i64 nf1, i64 nf2, i64 nf3, i64 ntransf,
    const i64 *__restrict__ sort_idx, T beta, i32 bs1, i32 bs2, i32 bs3, i64 nb1, i64 nb2, i64 nb3,
    const u64 *__restrict__ bin_start, const u64 *__restrict__ bin_count,
    const u64 *__restrict__ nsub_start, const i32 *__restrict__ subprob_bin,
    const u64 *__restrict__ n_subprob_p, i64 maxsub, V *__restrict__ fw, i64 set_M, i64 tps,
    const i32 *w_sel, i32 w_idx) {
    if (!WF_WIDTH_SELECTED(w_sel, w_idx))
        return;
    WF_DYNAMIC_SMEM(wf_smem);
    WF_PTS_INIT;
    WF_BINS_INIT;
    const wf_tile tl = wf_tile_of(B);
    const i64 nfprod = nf1 * nf2 * nf3;
    /* the subproblem's geometry lives in shared memory: block-uniform, and read only where
     * needed instead of occupying a dozen registers for the kernel's lifetime */
    __shared__ wf_subprob s_sp;
    const wf_subprob &sp = s_sp;
    (void)ntransf; /* block (x, y, z) runs set z's subproblems, that set's tps transforms */
#if WF_SPREAD_SM_REG
    /* the tile in registers (smr_spread.cuh): dynamic shared memory holds the point batches */
    if (wf_dynamic_smem_size() < wf_smr_smem_bytes() ||
        (int)(blockDim.x >> 5) < wf_smr_warps_needed(tl) ||
        (WF_DIM == 3 ? tl.td3 : tl.td2) > WF_SMR_NR)
        __trap();
    const wf_smr_smem S = wf_smr_carve(wf_smem);
    const wf_smr_col col = wf_smr_column(tl);
    V acc[WF_SMR_NR];
#pragma unroll
    for (int z = 0; z < WF_SMR_NR; ++z)
        acc[z] = wf_vzero();
    WF_SET_SUBPROBS(s) {
        WF_SET_TRANSFORMS(t) {
            __syncthreads(); /* the previous subproblem's batch is consumed */
            if (threadIdx.x == 0)
                s_sp = wf_subprob_get(s, B, P);
            __syncthreads();
            const V *ct = c + WF_SET_T(t) * set_M; /* values of transform z*tps + t */
            const int npts = sp.npts;
            wf_smr_fold(S, 0, 0, min(WF_SMR_NB, npts), sp, P, ct, sort_idx);
            int buf = 0;
#pragma unroll 1
            for (int b0 = 0; b0 < npts; b0 += WF_SMR_NB, buf ^= 1) {
                const int nb = min(WF_SMR_NB, npts - b0);
                __syncthreads(); /* folds of this batch in; the previous batch consumed */
                wf_smr_values(S, buf, nb, sp, P);
                __syncthreads(); /* values in */
                if (b0 + WF_SMR_NB < npts)
                    wf_smr_fold(S, buf ^ 1, b0 + WF_SMR_NB, min(WF_SMR_NB, npts - b0 - WF_SMR_NB),
                                sp, P, ct, sort_idx);
                wf_smr_accumulate(S, buf, nb, tl, col, acc);
            }
            wf_smr_flush(acc, fw + WF_SET_T(t) * nfprod, tl, sp, P, col);
        }
    }
#else
    V *tile = reinterpret_cast<V *>(wf_smem);
#if WF_SPREAD_SM_FIX
    __shared__ float s_fix_sum;
    bool fix = false;
    float inv_scale = 1.0f;
    /* 2^30 / 2^ceil(log2(maxsub)) (wf_fix_add) */
    const int lg = maxsub > 1 ? 64 - __clzll((unsigned long long)(maxsub - 1)) : 0;
    const float lo_scale = ldexpf(1.0f, lg < 30 ? 30 - lg : 0);
#endif
    WF_SET_SUBPROBS(s) {
        WF_SET_TRANSFORMS(t) {
            if (threadIdx.x == 0) {
                s_sp = wf_subprob_get(s, B, P);
#if WF_SPREAD_SM_FIX
                s_fix_sum = 0.0f;
#endif
            }
            for (int e = threadIdx.x; e < tl.n * WF_TILE_WORDS; e += blockDim.x)
                tile[e] = wf_vzero();
            __syncthreads();
            const V *ct = c + WF_SET_T(t) * set_M; /* values of transform z*tps + t */
#if WF_SPREAD_SM_OD2
            if (blockDim.x < WF_OD_MIN_BLOCK)
                __trap();
            wf_spread_sm_od2(tile, tl, sp, P, ct, sort_idx);
#elif WF_SPREAD_SM_OD
            if (blockDim.x < WF_OD_MIN_BLOCK)
                __trap();
            wf_spread_sm_od(tile, tl, sp, P, ct, sort_idx);
#elif WF_SPREAD_SM_FIX
            {
                /* scale: the subproblem's sum of |re| + |im| maps to 2^30 (wf_fix_add); zero,
                 * inf or NaN strengths take the float path (which propagates them) */
                const float S = wf_strength_sum(sp, ct, sort_idx, &s_fix_sum);
                fix = S > 0.0f && S <= 3.0e38f;
                inv_scale = S / WF_FIX_ONE;
#if WF_SPREAD_SM_TEAM
                if (fix)
                    wf_spread_sm_team<true>(tile, tl, sp, P, ct, sort_idx, WF_FIX_ONE / S,
                                            lo_scale);
                else
                    wf_spread_sm_team<false>(tile, tl, sp, P, ct, sort_idx);
#else
                if (fix)
                    wf_spread_sm_thread<true>(tile, tl, sp, P, ct, sort_idx,
                                              WF_FIX_ONE / S, lo_scale);
                else
                    wf_spread_sm_thread<false>(tile, tl, sp, P, ct, sort_idx);
#endif
            }
#elif WF_SPREAD_SM_TEAM
            wf_spread_sm_team(tile, tl, sp, P, ct, sort_idx);
#else
            wf_spread_sm_thread(tile, tl, sp, P, ct, sort_idx);
#endif
            __syncthreads();
            V *f = fw + WF_SET_T(t) * nfprod;
#if WF_SPREAD_SM_FIX
            if (fix)
                wf_tile_flush_fix(tile, f, tl, sp, P, inv_scale, lo_scale);
            else
#endif
                wf_tile_flush(tile, f, tl, sp, P);
            __syncthreads(); /* the tile is zeroed again for the next transform / subproblem */
        }
    }
#endif /* WF_SPREAD_SM_REG */
}
#endif

#if WF_SI_PART == WF_SI_INTERP && WF_SI_METHOD == WF_SI_SM
/* SM interp: per subproblem and transform, load the tile from fw (wrapped), then interpolate
 * the points from shared memory. */
extern "C" __global__ void WF_INTERP_SM_BOUNDS WF_SINAME(interp_sm)(
    i64 M, const T *__restrict__ x, const T *__restrict__ y, const T *__restrict__ z,
    V *__restrict__ c, i64 nf1, i64 nf2, i64 nf3, i64 ntransf, const i64 *__restrict__ sort_idx,
    T beta, i32 bs1, i32 bs2, i32 bs3, i64 nb1, i64 nb2, i64 nb3, const u64 *__restrict__ bin_start,
    const u64 *__restrict__ bin_count, const u64 *__restrict__ nsub_start,
    const i32 *__restrict__ subprob_bin, const u64 *__restrict__ n_subprob_p, i64 maxsub,
    const V *__restrict__ fw, i64 set_M, i64 tps, const i32 *w_sel, i32 w_idx) {
    if (!WF_WIDTH_SELECTED(w_sel, w_idx))
        return;
    WF_DYNAMIC_SMEM(wf_smem);
    V *tile = reinterpret_cast<V *>(wf_smem);
    WF_PTS_INIT;
    WF_BINS_INIT;
    const wf_tile tl = wf_tile_of(B);
    const i64 nfprod = nf1 * nf2 * nf3;
    __shared__ wf_subprob s_sp;
    const wf_subprob &sp = s_sp;
    (void)ntransf; /* as spread_sm: block (x, y, z) runs set z */
    WF_SET_SUBPROBS(s) {
        WF_SET_TRANSFORMS(t) {
            if (threadIdx.x == 0)
                s_sp = wf_subprob_get(s, B, P);
            __syncthreads();
            const V *f = fw + WF_SET_T(t) * nfprod;
            for (int e = threadIdx.x; e < tl.n; e += blockDim.x)
                tile[e] = wf_ldg(f + wf_tile_cell_to_grid(e, tl, sp, P));
            __syncthreads();
#if WF_INTERP_SM_TEAM
            wf_interp_sm_team(tile, tl, sp, P, c + WF_SET_T(t) * set_M, sort_idx);
#else
            wf_interp_sm_thread(tile, tl, sp, P, c + WF_SET_T(t) * set_M, sort_idx);
#endif
            __syncthreads(); /* the tile is reloaded for the next transform / subproblem */
        }
    }
}
#endif

#if WF_SI_PART == WF_SI_SPREAD && WF_SI_METHOD == WF_SI_OD
/* OD spread: warps own tiles of the fine grid (tl1 x tl2 x tl3 cells, row pitch pitch1), gather
 * the points whose footprints touch them and write every cell of fw once (od_spread.cuh). */
extern "C" __global__ void __launch_bounds__(WF_OD_MAX_BLOCK)
    WF_SINAME(spread_od)(i64 M, const T *__restrict__ x, const T *__restrict__ y,
                         const T *__restrict__ z, const V *__restrict__ c, i64 nf1, i64 nf2,
                         i64 nf3, i64 ntransf, const i64 *__restrict__ sort_idx, T beta, i32 bs1,
                         i32 bs2, i32 bs3, i64 nb1, i64 nb2, i64 nb3,
                         const u64 *__restrict__ bin_start, const u64 *__restrict__ bin_count,
                         i32 tl1, i32 tl2, i32 tl3, i32 pitch1, V *__restrict__ fw,
                         const i32 *w_sel, i32 w_idx) {
    if (!WF_WIDTH_SELECTED(w_sel, w_idx))
        return;
    WF_PTS_INIT;
    wf_bins B;
    B.bs1 = bs1;
    B.bs2 = bs2;
    B.bs3 = bs3;
    B.nb1 = nb1;
    B.nb2 = nb2;
    B.nb3 = nb3;
    B.bin_start = bin_start;
    B.bin_count = bin_count;
    B.nsub_start = NULL;
    B.subprob_bin = NULL;
    B.maxsub = 0;
    wf_spread_od(M, P, c, ntransf, sort_idx, B, nb3, tl1, tl2, tl3, pitch1, fw);
}
#endif
