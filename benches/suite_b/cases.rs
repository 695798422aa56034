//! Suite B's cases (DESIGN.md) and the type-3 cases: shapes, point sets, tolerances. The
//! `ref_ms` columns are the reference library's times from earlier runs on other cards, a note
//! only: `WARPFFT_BENCH_PEER` (suite_b.rs) puts the reference's best method from the same run
//! in their place, the only comparison that counts.
//! B1m–B5m are B1–B5 at tol/10 (the reference's error at tol is above tol); D1–D3 the 3D f64
//! density sweep (256³ modes, tol 1e-6, M = 1.7e6 / 1.7e7 / 1.7e8, types 1 and 2; uniform points
//! as the reference's perftest draws them, so both libraries see the same distribution); N1–N5 the
//! same sweep on NonuniformFFTs.jl's normal points at its published M values (1.7e6 … 1.7e8);
//! M2R, M2S, M3R MRI trajectories at MRI sizes (radial and spiral 2D 256² × 16 coils, radial 3D
//! 256³). The reference's times on the non-uniform rows come from python/bench/density.py (its
//! perftest draws uniform points only).
#![allow(dead_code)]

use super::model::Dist;

pub struct Bench {
    pub name: &'static str,
    pub dist: Dist,
    pub dim: i32,
    pub ty: i32,
    pub f64: bool,
    pub n: [i64; 3],
    pub m: i64,
    pub ntransf: i64,
    pub tol: f64,
    /// the reference library's execute time from an earlier run on another card: a note
    /// (NaN: none); suite_b compares with `WARPFFT_BENCH_PEER`'s same-run times instead
    pub ref_ms: f64,
}

const U: Dist = Dist::Uniform;
/// R2: 5000 spokes × 2000 samples (readout ~2× the 1024 modes); R3: 40000 × 250 (~2× 128).
const R2: Dist = Dist::Radial {
    spokes: 5000,
    samples: 2000,
};
const R3: Dist = Dist::Radial {
    spokes: 40_000,
    samples: 250,
};
/// 16 clusters holding 90% of the points; σ = 4 (2D) or 2 (3D) mode-grid spacings: their 4σ
/// balls cover ~1.3% (2D) and ~1.6% (3D) of the volume.
const C2: Dist = Dist::Clustered {
    clusters: 16,
    frac: 0.9,
    sigma_cells: 4.0,
};
const C3: Dist = Dist::Clustered {
    clusters: 16,
    frac: 0.9,
    sigma_cells: 2.0,
};
/// NonuniformFFTs.jl's published GPU benchmark: `randn` coordinates (std 1) folded into the box.
const NRM: Dist = Dist::Normal { std: 1.0 };
/// MRI sizes: 2D 256² radial, 402 spokes × 512 samples (readout 2× the modes, ~π/2 · 256
/// spokes); 2D spiral, 16 interleaves × 12800 samples, 8 turns; 3D 256³ radial (kooshball),
/// 32768 spokes × 512 samples. The 2D rows transform 16 coils at once (ntransf 16).
const MR2: Dist = Dist::Radial {
    spokes: 402,
    samples: 512,
};
const MS2: Dist = Dist::Spiral {
    arms: 16,
    samples: 12_800,
    turns: 8.0,
    power: 1.0,
};
const MR3: Dist = Dist::Radial {
    spokes: 32_768,
    samples: 512,
};
const NOREF: f64 = f64::NAN;

#[rustfmt::skip]
pub const SUITE: &[Bench] = &[
    Bench { name: "B1", dist: U, dim: 1, ty: 1, f64: false, n: [1_000_000, 1, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 0.62 },
    Bench { name: "B2", dist: U, dim: 2, ty: 1, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 2.07 },
    Bench { name: "B3", dist: U, dim: 2, ty: 2, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 1.30 },
    Bench { name: "B4", dist: U, dim: 3, ty: 1, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 5.61 },
    Bench { name: "B5", dist: U, dim: 3, ty: 2, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 3.19 },
    Bench { name: "B6", dist: U, dim: 2, ty: 1, f64: true, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-9, ref_ms: 12.6 },
    Bench { name: "B7", dist: U, dim: 3, ty: 1, f64: true, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-9, ref_ms: 341.0 },
    Bench { name: "B8", dist: U, dim: 3, ty: 2, f64: true, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-9, ref_ms: 20.5 },
    Bench { name: "B9", dist: U, dim: 2, ty: 1, f64: false, n: [256, 256, 1], m: 1_000_000, ntransf: 8, tol: 1e-5, ref_ms: 2.66 },
    Bench { name: "B1m", dist: U, dim: 1, ty: 1, f64: false, n: [1_000_000, 1, 1], m: 10_000_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "B2m", dist: U, dim: 2, ty: 1, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "B3m", dist: U, dim: 2, ty: 2, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "B4m", dist: U, dim: 3, ty: 1, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "B5m", dist: U, dim: 3, ty: 2, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "D1t1", dist: U, dim: 3, ty: 1, f64: true, n: [256, 256, 256], m: 1_700_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "D1t2", dist: U, dim: 3, ty: 2, f64: true, n: [256, 256, 256], m: 1_700_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "D2t1", dist: U, dim: 3, ty: 1, f64: true, n: [256, 256, 256], m: 17_000_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "D2t2", dist: U, dim: 3, ty: 2, f64: true, n: [256, 256, 256], m: 17_000_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "D3t1", dist: U, dim: 3, ty: 1, f64: true, n: [256, 256, 256], m: 170_000_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "D3t2", dist: U, dim: 3, ty: 2, f64: true, n: [256, 256, 256], m: 170_000_000, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "R2t1", dist: R2, dim: 2, ty: 1, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "R2t2", dist: R2, dim: 2, ty: 2, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "R3t1", dist: R3, dim: 3, ty: 1, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "R3t2", dist: R3, dim: 3, ty: 2, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "C2t1", dist: C2, dim: 2, ty: 1, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "C2t2", dist: C2, dim: 2, ty: 2, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "C3t1", dist: C3, dim: 3, ty: 1, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "C3t2", dist: C3, dim: 3, ty: 2, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "N1t1", dist: NRM, dim: 3, ty: 1, f64: true, n: [256, 256, 256], m: 1_677_722, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "N1t2", dist: NRM, dim: 3, ty: 2, f64: true, n: [256, 256, 256], m: 1_677_722, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "N2t1", dist: NRM, dim: 3, ty: 1, f64: true, n: [256, 256, 256], m: 5_305_422, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "N2t2", dist: NRM, dim: 3, ty: 2, f64: true, n: [256, 256, 256], m: 5_305_422, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "N3t1", dist: NRM, dim: 3, ty: 1, f64: true, n: [256, 256, 256], m: 16_777_216, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "N3t2", dist: NRM, dim: 3, ty: 2, f64: true, n: [256, 256, 256], m: 16_777_216, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "N4t1", dist: NRM, dim: 3, ty: 1, f64: true, n: [256, 256, 256], m: 53_054_215, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "N4t2", dist: NRM, dim: 3, ty: 2, f64: true, n: [256, 256, 256], m: 53_054_215, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "N5t1", dist: NRM, dim: 3, ty: 1, f64: true, n: [256, 256, 256], m: 167_772_160, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "N5t2", dist: NRM, dim: 3, ty: 2, f64: true, n: [256, 256, 256], m: 167_772_160, ntransf: 1, tol: 1e-6, ref_ms: NOREF },
    Bench { name: "M2Rt1", dist: MR2, dim: 2, ty: 1, f64: false, n: [256, 256, 1], m: 205_824, ntransf: 16, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "M2Rt2", dist: MR2, dim: 2, ty: 2, f64: false, n: [256, 256, 1], m: 205_824, ntransf: 16, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "M2St1", dist: MS2, dim: 2, ty: 1, f64: false, n: [256, 256, 1], m: 204_800, ntransf: 16, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "M2St2", dist: MS2, dim: 2, ty: 2, f64: false, n: [256, 256, 1], m: 204_800, ntransf: 16, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "M3Rt1", dist: MR3, dim: 3, ty: 1, f64: false, n: [256, 256, 256], m: 16_777_216, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
    Bench { name: "M3Rt2", dist: MR3, dim: 3, ty: 2, f64: false, n: [256, 256, 256], m: 16_777_216, ntransf: 1, tol: 1e-5, ref_ms: NOREF },
];

/// A type-3 case: M sources uniform in [-π, π)^dim, K targets uniform in [-smax, smax]^dim.
pub struct Bench3 {
    pub name: &'static str,
    pub dim: i32,
    pub f64: bool,
    pub m: i64,
    pub k: i64,
    pub smax: f64,
    pub tol: f64,
    /// the reference library's execute time on the same H100, and its relative error
    pub ref_ms: f64,
    pub ref_err: f64,
}

#[rustfmt::skip]
pub const SUITE3: &[Bench3] = &[
    Bench3 { name: "T1", dim: 1, f64: false, m: 10_000_000, k: 10_000_000, smax: 5e5, tol: 1e-5, ref_ms: 1.89, ref_err: 1.1e-1 },
    Bench3 { name: "T2", dim: 1, f64: true, m: 10_000_000, k: 10_000_000, smax: 5e5, tol: 1e-9, ref_ms: 3.24, ref_err: 1.7e-9 },
    Bench3 { name: "T3", dim: 2, f64: false, m: 10_000_000, k: 10_000_000, smax: 512.0, tol: 1e-5, ref_ms: 6.85, ref_err: 1.7e-4 },
    Bench3 { name: "T4", dim: 2, f64: true, m: 10_000_000, k: 10_000_000, smax: 512.0, tol: 1e-9, ref_ms: 27.7, ref_err: 3.9e-9 },
    Bench3 { name: "T5", dim: 3, f64: false, m: 1_000_000, k: 1_000_000, smax: 64.0, tol: 1e-5, ref_ms: 17.8, ref_err: 3.2e-5 },
    Bench3 { name: "T6", dim: 3, f64: true, m: 1_000_000, k: 1_000_000, smax: 64.0, tol: 1e-9, ref_ms: 184.0, ref_err: 3.1e-9 },
    Bench3 { name: "T7", dim: 3, f64: false, m: 10_000_000, k: 10_000_000, smax: 64.0, tol: 1e-5, ref_ms: 151.0, ref_err: 4.4e-5 },
    Bench3 { name: "T8", dim: 3, f64: true, m: 10_000_000, k: 10_000_000, smax: 64.0, tol: 1e-9, ref_ms: 854.0, ref_err: 2.2e-9 },
];
