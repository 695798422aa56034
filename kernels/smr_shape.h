/*
 * smr_shape.h — SM spreading with the tile in registers (kernels/spreadinterp/smr_spread.cuh):
 * which spreading modules use it and in what shape, defined once. The kernels' defaults read it
 * (spreadinterp.cu: WF_SPREAD_SM_REG, WF_SMR_NR, WF_SMR_NBW, the register cap) and so does the
 * host (c_core/src/params/bins.c: the bins, the block and the dynamic shared memory of the
 * launch), so a module and the plans that launch it cannot disagree; the tools read the shape a
 * module was built with from the module itself (its wf_smr_info). Plain macros of integer
 * constants: the same text works in #if (kernels, NVRTC) and as C expressions (host, tests).
 *
 *   WF_SMR_NR_OF(dim, prec, w)  complex registers per thread along the tile's last dimension
 *                               (the tile's last extent, bs_last + 2 pad, must fit: the host's
 *                               last bin extent is NR - 2 pad); 0: the module keeps its tile in
 *                               shared memory (sm_spread.cuh)
 *   WF_SMR_NBW_OF(dim, prec, w) points per batch / 32
 *   WF_SMR_MAXREG_OF(prec, nr)  the kernel's register cap (__maxnreg__); a block then holds at
 *                               most 65536 / (32 cap) warps, which bounds the host's bins
 * prec is 32 or 64, pad = (w + 1) / 2. The columns are flat rows over the lanes (WF_SMR_PX = 0,
 * spreadinterp.cu's default in f64). Every module this table turns on passes kernels/check.sh
 * (no spill, no stack; 3D w13-14 and 2D w15-16 at exactly the cap of 128).
 *
 * Measured on the H100, kernels alone, errors identical (benches/kernels-sweep-h100-2026-12-06.log;
 * the shared tile first):
 *  - 3D f64, NR = 4 + 2 pad (the last bin extent 4, bins 8 x 8 x 4 as the shared tile's), batches
 *    of 32: w10 B7 (128^3, M 1e7, sigma 2) 47.2 -> 26.1 ms (6 x 8 x 4: 26.4, batches of 64: 26.5);
 *    w8 D2t1 (256^3, M 1.7e7) 42.7 -> 30.6, D3t1 (M 1.7e8) 285.7 -> 211.8. D2t1 ran 28.5 with
 *    NR 16 and 8 x 8 x 8 bins (batches of 64), not measured at D3t1's density, where 16 against 12
 *    registers per column is a third more FMAs per point: w8 keeps the shape measured at both.
 *    Other widths, from the two: the shared tile costs about ceil(w^3 / 256) passes per point
 *    (w9 3 against w10's 4, w11 63.0 ms on B7), the register tile about the warps a footprint
 *    meets times NR. w7 and w9 share w8's and w10's tiles (same pad) with no more passes saved
 *    (w7: 2, as w8) or fewer (w9: 3 of w10's 4): ~0.75 and ~0.73 expected. w11-12 (NR 16, 13
 *    warps) and w13-14 (NR 18, 16 warps: the whole register file, one block per SM as w10's
 *    352 threads) cost ~1.4x and ~2x w10's register tile, where the shared tile runs 6-7 and
 *    9-11 passes (costmodel-h100.jsonl: 5.9-6.7 ns per point at w11-12, 13.2-21 at w13-14, against
 *    w10's 2.6 here). Kept on the shared tile: w2-6 (one pass per point there, half of w8's
 *    two, while the register tile saves little: ~1.1x expected) and w15-16 (NR 20 needs 138
 *    registers, spills at 128, so a block holds at most 14 warps: bins of 4 x 4 x 4, 125 tile
 *    cells flushed per bin cell against w10's 18: no shape near a measured one).
 *  - 2D f64, NR = 2 + 2 pad (bins (128 - 2 pad) x 2: four warps of tile columns), batches of
 *    64: w10 B6 (1024^2, M 1e7) 5.24 -> 4.55 ms (NR 16 with 6-row bins: 5.58; 64-thread blocks
 *    5.04). The register tile costs about NR (1 + (w - 1)/32) per point, the shared tile grows
 *    faster with w (costmodel-h100.jsonl, B6's size: 0.34 ns per point at w7-8, 0.45 w9, 0.51
 *    w10, 0.58 w11, 0.72 w12, 0.81 w13, 0.87-0.92 w15-16): ~0.9x at w11 and w16, ~0.8x at
 *    w12-15 expected; w9 (NR 12 as w10, fewer cells) about even and w2-8 slower: shared tile.
 *  - 3D f32 (B4, w6-7): every register-tile shape measured lost (1.0-1.8x): shared tile.
 *  - 3D f64 w11-14 are back on the shared tile: their blocks (8 x 8 x 4 bins: 13 and 16 warps)
 *    were never launched on a GPU, and an 18-warp block at the cap 112 failed to launch there
 *    (the host now sizes no register-tile block past the 11 warps B7 ran, params/bins.c).
 */
#ifndef WF_SMR_SHAPE_H
#define WF_SMR_SHAPE_H

#define WF_SMR_PAD2_(w) (2 * (((w) + 1) / 2))

#define WF_SMR_NR_OF(dim, prec, w)                                                                 \
    ((prec) == 64 && (dim) == 3 && (w) >= 7 && (w) <= 10    ? 4 + WF_SMR_PAD2_(w)                  \
     : (prec) == 64 && (dim) == 2 && (w) >= 10 && (w) <= 16 ? 2 + WF_SMR_PAD2_(w)                  \
                                                            : 0)
#define WF_SMR_NBW_OF(dim, prec, w) ((dim) == 2 ? 2 : 1)
#define WF_SMR_MAXREG_OF(prec, nr)                                                                 \
    ((prec) == 32 ? ((nr) <= 12 ? 80 : 96) : ((nr) <= 14 ? 112 : 128))

#endif /* WF_SMR_SHAPE_H */
