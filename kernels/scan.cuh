/*
 * scan.cuh — warp-level prefix-sum primitive (defined in scan.cu, relocatable device code).
 *
 * sort.cu's block scan calls it across the file boundary: module `sort` is compiled with
 * -rdc=true and device-linked, so this is a real call, not an inlined copy. Its interface is
 * one register value in and out. On sm_90+ the call needs no stack frame; on sm_75..sm_89 the
 * calling convention makes ptxas save ~6 callee-saved registers (24-32 B of local memory) in
 * any non-trivial callee — harmless here (a few calls per 4096 scanned items).
 */
#ifndef WF_SCAN_CUH
#define WF_SCAN_CUH

#include "common.cuh"

/* Inclusive prefix sum over the 32 lanes of the calling warp: lane l gets Σ_{l' <= l} v(l').
 * All 32 lanes must call it together. */
extern __device__ u64 wf_warp_inclusive_scan_u64(u64 v);

#endif /* WF_SCAN_CUH */
