/*
 * diagnostics.h — functions the library exports for its tests, outside warpfft.h's ABI (no
 * compatibility promise, no language binding): the C tests include this header, the Rust GPU
 * tests declare the functions themselves (tests/gpu_accuracy/points_width.rs). Defined in the
 * api/ files of their topic. Not installed.
 */
#ifndef WARPFFT_API_DIAGNOSTICS_H
#define WARPFFT_API_DIAGNOSTICS_H

#include <stdint.h>

#include "warpfft.h"

/* u64 words of one point set's statistics in warpfft_plan_points_width (kernels/offsets_bound.h,
 * WF_OFF_STATS_WORDS). */
#define WARPFFT_OFFSET_STATS_WORDS 13057

/* The widths a plan may run with and the one its current points took (docs/accuracy.md, "The
 * width the points need"; api/points.c): widths[0 .. *n_widths) gets them, narrowest first, the
 * last the every-point-set width (1 width: a plan whose points cannot narrow it, and type 3);
 * *in_use the current points' (0 before a setpts or for M = 0), waiting for the plan's stream
 * when the choice was not read back yet (plan_info reports it from then on). stats (may be
 * NULL) gets at most n_stats words of the statistics the last setpts gathered,
 * WARPFFT_OFFSET_STATS_WORDS u64 per point set: the count, then cell[d][c] for d < 3, c < 256
 * (the points whose fine-grid offset u - floor(u) lies in [c/256, (c+1)/256) in dim d), then
 * joint[P][b*64 + b'] for the pairs of dims P = (0,1), (0,2), (1,2) (the points in cells
 * 4b..4b+3 of the first and 4b'..4b'+3 of the second); zeros where none were gathered (one
 * width; several point sets of fewer than 4096 points each, which take the every-point-set
 * width). The GPU tests compare the statistics with a host count. */
WARPFFT_API warpfft_status warpfft_plan_points_width(warpfft_plan plan, int32_t widths[4],
                                                     int32_t *n_widths, int32_t *in_use,
                                                     uint64_t *stats, int64_t n_stats);

#endif /* WARPFFT_API_DIAGNOSTICS_H */
