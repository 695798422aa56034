//! What a case is (dimension, type, precision, tol, method, sizes, points, ...), its point
//! distributions, and the defaults, tolerances and sizes the tables share.

use crate::common::Rng;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    Uniform,
    Wide,    // uniform in [-3π, 3π): exercises folding
    Cluster, // all points inside one spreading bin
    /// every point exactly on a fine-grid node (x = -π + 2π l / nf)
    Nodes,
    /// every point half-way between two nodes (the worst offset for odd widths)
    HalfNodes,
    /// half the points on nodes, half uniform
    MixNodes,
    /// ±π, the doubles (or floats) next to them, 0, and nodes
    NearPi,
    /// a normal cloud of σ = 1e-3 around one location
    Tight,
    /// uniform in [-1e4, 1e4)
    Far,
    /// N(0, 1) in every coordinate (NonuniformFFTs.jl's set-up; the library folds the rare
    /// |x| > π)
    Normal,
    /// on 64 spokes through 0 in random directions, the radius uniform in [-π, π) (MRI's
    /// radial trajectories)
    Radial,
    /// every point within 1e-3 of a cell of a fine-grid node
    Lattice,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub dim: i32,
    pub ty: i32,
    pub f64: bool,
    pub tol: f64,
    pub method: i32,
    pub modeord: i32,
    pub ntransf: i64,
    pub n: [i64; 3],
    pub m: i64,
    pub dist: Dist,
    pub upsampfac: f64,
    /// type 2 input in the band-edge corner mode k = (-N/2, ..) only (even N, modeord 0)
    pub edge_only: bool,
    /// opts.bin_size (0: the default per dim)
    pub bin_size: [i32; 3],
}

/// The header of the columns every case table starts with (`Case::lead`).
pub const LEAD: &str = "dim type prec     tol";

impl Case {
    /// "f32" or "f64".
    pub fn prec(&self) -> &'static str {
        if self.f64 {
            "f64"
        } else {
            "f32"
        }
    }

    /// The columns every case table starts with: dim, type, precision, tol.
    pub fn lead(&self) -> String {
        format!(
            "{:>3} {:>4} {:>4} {:>7.0e}",
            self.dim,
            self.ty,
            self.prec(),
            self.tol
        )
    }
}

/// The next representable value of the precision above (`up`) or below `v` (finite, nonzero;
/// by the bit pattern: `next_up` needs Rust 1.86, the crate's MSRV is 1.70).
fn next_to(v: f64, up: bool, f64: bool) -> f64 {
    let away = up == (v > 0.0); // away from zero: the magnitude's bit pattern grows
    if f64 {
        let b = v.to_bits();
        f64::from_bits(if away { b + 1 } else { b - 1 })
    } else {
        let b = (v as f32).to_bits();
        f64::from(f32::from_bits(if away { b + 1 } else { b - 1 }))
    }
}

/// Points of a case; `nf` is the plan's fine grid (grid-aligned sets).
pub fn points(rng: &mut Rng, c: &Case, nf: [i64; 3]) -> Vec<Vec<f64>> {
    let pi = std::f64::consts::PI;
    // radial: the spokes' unit directions (normal deviates, normalised) and each point's radius
    let gauss = |rng: &mut Rng| {
        let (a, b) = (rng.uniform().max(1e-300), rng.uniform());
        (-2.0 * a.ln()).sqrt() * (2.0 * pi * b).cos()
    };
    let (spokes, radii): (Vec<[f64; 3]>, Vec<f64>) = if c.dist == Dist::Radial {
        let spokes = (0..64)
            .map(|_| {
                let v = [gauss(rng), gauss(rng), gauss(rng)];
                let n = v[..c.dim as usize]
                    .iter()
                    .map(|x| x * x)
                    .sum::<f64>()
                    .sqrt();
                [v[0] / n, v[1] / n, v[2] / n]
            })
            .collect();
        (spokes, (0..c.m).map(|_| rng.range(-pi, pi)).collect())
    } else {
        (Vec::new(), Vec::new())
    };
    let node = |rng: &mut Rng, d: usize, half: f64| {
        let l = rng.below(nf[d] as u64) as f64 + half;
        -pi + 2.0 * pi * (l / nf[d] as f64)
    };
    (0..c.dim as usize)
        .map(|d| {
            let special = [
                -pi,
                pi,
                next_to(pi, true, c.f64),
                next_to(pi, false, c.f64),
                next_to(-pi, false, c.f64),
                next_to(-pi, true, c.f64),
                0.0,
            ];
            (0..c.m as usize)
                .map(|j| match c.dist {
                    Dist::Uniform => rng.range(-pi, pi),
                    Dist::Wide => rng.range(-3.0 * pi, 3.0 * pi),
                    // a cube of 8 fine-grid cells (upsampling 2) at an arbitrary place
                    Dist::Cluster => {
                        0.3 + d as f64 * 0.1 + rng.uniform() * 8.0 * pi / c.n[d] as f64
                    }
                    Dist::Nodes => node(rng, d, 0.0),
                    Dist::HalfNodes => node(rng, d, 0.5),
                    Dist::MixNodes if j % 2 == 0 => node(rng, d, 0.0),
                    Dist::MixNodes => rng.range(-pi, pi),
                    Dist::NearPi if j % 3 == 0 => special[rng.below(special.len() as u64) as usize],
                    Dist::NearPi => node(rng, d, 0.0),
                    Dist::Tight => {
                        // Box-Muller
                        let (a, b) = (rng.uniform().max(1e-300), rng.uniform());
                        let g = (-2.0 * a.ln()).sqrt() * (2.0 * pi * b).cos();
                        0.7 - 0.4 * d as f64 + 1e-3 * g
                    }
                    Dist::Far => rng.range(-1e4, 1e4),
                    Dist::Normal => gauss(rng),
                    Dist::Radial => radii[j] * spokes[j % 64][d],
                    Dist::Lattice => {
                        let jitter = 1e-3 * rng.range(-1.0, 1.0);
                        node(rng, d, jitter)
                    }
                })
                .collect()
        })
        .collect()
}

/// A case with the defaults of the issue-14 tables (modeord 0, one transform, upsampfac 2).
pub fn case(dim: i32, ty: i32, f64: bool, tol: f64, n: [i64; 3], m: i64, dist: Dist) -> Case {
    Case {
        dim,
        ty,
        f64,
        tol,
        method: 0,
        modeord: 0,
        ntransf: 1,
        n,
        m,
        dist,
        upsampfac: 2.0,
        edge_only: false,
        bin_size: [0; 3],
    }
}

/// Each case, then a copy at another upsampling factor: 0 (the plan's choice) or a fixed one
/// in [1.25, 3] other than 2, cycled through the cases (f32 skips 1.5, whose rounding floor
/// refuses f32's tighter tols). The every-point-set contract holds at any sigma a plan takes.
pub fn with_sigmas(cases: Vec<Case>) -> Vec<Case> {
    let mut out = Vec::with_capacity(2 * cases.len());
    for (i, c) in cases.into_iter().enumerate() {
        let sig: &[f64] = if c.f64 {
            &[0.0, 1.5, 2.5, 3.0]
        } else {
            &[0.0, 2.5, 3.0]
        };
        let mut other = c.clone();
        other.upsampfac = sig[i % sig.len()];
        out.push(c);
        out.push(other);
    }
    out
}

/// Tolerances per precision for the issue-14 tables.
pub fn tols(f64: bool) -> &'static [f64] {
    if f64 {
        &[1e-5, 1e-9, 1e-12]
    } else {
        &[1e-2, 1e-4, 1e-5]
    }
}

/// Even sizes (the band-edge mode -N/2 exists) and an odd one per dim.
pub fn sizes(dim: i32, odd: bool) -> [i64; 3] {
    let o = i64::from(odd);
    match dim {
        1 => [2000 + o, 1, 1],
        2 => [96 + o, 98, 1],
        _ => [24 + o, 26, 28],
    }
}

/// Every dim (1 to 3) × type (1, 2), nested in this order.
pub fn dims_types() -> impl Iterator<Item = (i32, i32)> {
    (1..=3).flat_map(|dim| [1, 2].map(move |ty| (dim, ty)))
}

/// Every dim (1 to 3) × type (1, 2) × precision (f32, f64) × that precision's `tols`, nested
/// in this order.
pub fn dim_type_prec_tol() -> Vec<(i32, i32, bool, f64)> {
    let mut v = Vec::new();
    for (dim, ty) in dims_types() {
        for f64 in [false, true] {
            for &tol in tols(f64) {
                v.push((dim, ty, f64, tol));
            }
        }
    }
    v
}
