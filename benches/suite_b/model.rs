//! Host-only parts of suite B (no GPU): the non-uniform point sets, case selection, the
//! roofline model and the output (table lines, results JSON).
//! Included by benches/suite_b.rs and by tests/bench_model.rs (unit tests), so each side
//! uses only part of it.
#![allow(dead_code)]

use std::f64::consts::PI;

// ---------------------------------------------------------------- point sets

/// Which points a case uses (docs/performance.md, "Non-uniform rows").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// M points uniform in [-π, π)^d (DESIGN.md's suite B).
    Uniform,
    /// Radial MRI-like trajectory: `spokes` lines through k = 0 at uniform angles (2D: θ_i =
    /// πi/spokes; 3D: directions of a golden-angle spiral over the half sphere), each with
    /// `samples` equispaced points r_j = -π + 2πj/samples, so M = spokes × samples; every spoke
    /// passes through the origin (j = samples/2), the density falls as 1/r^(d-1).
    Radial { spokes: usize, samples: usize },
    /// `clusters` Gaussian clusters with centres uniform in [-π, π)^d and standard deviation
    /// `sigma_cells` mode-grid spacings (2π·sigma_cells/N_d per dimension), holding the fraction
    /// `frac` of the M points in equal shares; the rest uniform; wrapped into [-π, π).
    Clustered {
        clusters: usize,
        frac: f64,
        sigma_cells: f64,
    },
    /// Normal points: each coordinate drawn from N(0, `std`²) (radians) and folded into
    /// [-π, π), as NonuniformFFTs.jl's published GPU benchmark draws them (`randn`, std 1):
    /// dense in the middle of each axis (2.5× the uniform density per dim at std 1, ~16× in
    /// 3D at the centre).
    Normal { std: f64 },
    /// A variable-density spiral trajectory (2D MRI): `arms` interleaves of `samples` points
    /// each, arm a at angle θ = 2π(a/arms + turns·t^p), radius π·t, t = j/samples, so the
    /// centre of k-space is sampled densely (p > 1); M = arms × samples.
    Spiral {
        arms: usize,
        samples: usize,
        turns: f64,
        power: f64,
    },
}

impl Dist {
    /// The short name used in the output ("uniform", "radial", "clustered").
    pub fn label(&self) -> &'static str {
        match self {
            Dist::Uniform => "uniform",
            Dist::Radial { .. } => "radial",
            Dist::Clustered { .. } => "clustered",
            Dist::Normal { .. } => "normal",
            Dist::Spiral { .. } => "spiral",
        }
    }
}

/// Folds a real coordinate into [-π, π).
pub fn wrap(x: f64) -> f64 {
    let y = (x + PI).rem_euclid(2.0 * PI) - PI;
    if y >= PI {
        -PI
    } else {
        y
    }
}

/// Unit direction of spoke `i` of `spokes` in `dim` (2 or 3) dimensions.
pub fn spoke_direction(dim: usize, i: usize, spokes: usize) -> [f64; 3] {
    if dim == 2 {
        let t = PI * i as f64 / spokes as f64;
        return [t.cos(), t.sin(), 0.0];
    }
    // golden-angle spiral over z in (0, 1): a spoke covers both halves of the sphere
    let z = (i as f64 + 0.5) / spokes as f64;
    let r = (1.0 - z * z).sqrt();
    let phi = i as f64 * PI * (3.0 - 5f64.sqrt());
    [r * phi.cos(), r * phi.sin(), z]
}

/// The radial trajectory: `dim` coordinate arrays of spokes × samples points, spoke-major.
pub fn radial(dim: usize, spokes: usize, samples: usize) -> Vec<Vec<f64>> {
    let mut pts = vec![Vec::with_capacity(spokes * samples); dim];
    for i in 0..spokes {
        let u = spoke_direction(dim, i, spokes);
        for j in 0..samples {
            let r = -PI + 2.0 * PI * j as f64 / samples as f64;
            for (d, p) in pts.iter_mut().enumerate() {
                p.push(wrap(r * u[d]));
            }
        }
    }
    pts
}

/// Normal points: `dim` arrays of `m` coordinates N(0, std²) folded into [-π, π); `uniform01`
/// gives uniform numbers in [0, 1) (Box-Muller).
pub fn normal(
    dim: usize,
    m: usize,
    std: f64,
    uniform01: &mut impl FnMut() -> f64,
) -> Vec<Vec<f64>> {
    let mut pts = vec![Vec::with_capacity(m); dim];
    for _ in 0..m {
        for p in pts.iter_mut() {
            let (a, b) = (uniform01(), uniform01());
            let g = (-2.0 * (1.0 - a).ln()).sqrt() * (2.0 * PI * b).cos();
            p.push(wrap(std * g));
        }
    }
    pts
}

/// The spiral trajectory (2D): `arms` × `samples` points, arm-major (see [`Dist::Spiral`]).
pub fn spiral(arms: usize, samples: usize, turns: f64, power: f64) -> Vec<Vec<f64>> {
    let mut pts: Vec<Vec<f64>> = (0..2).map(|_| Vec::with_capacity(arms * samples)).collect();
    for a in 0..arms {
        for j in 0..samples {
            let t = j as f64 / samples as f64;
            let th = 2.0 * PI * (a as f64 / arms as f64 + turns * t.powf(power));
            let r = PI * t;
            pts[0].push(wrap(r * th.cos()));
            pts[1].push(wrap(r * th.sin()));
        }
    }
    pts
}

/// The clustered set: `m` points in `dim` dimensions for a mode grid `n` (the cluster width is
/// in its spacings); `uniform01` gives uniform numbers in [0, 1). Returns the coordinate
/// arrays and the cluster centres.
pub fn clustered(
    dim: usize,
    m: usize,
    n: [i64; 3],
    clusters: usize,
    frac: f64,
    sigma_cells: f64,
    uniform01: &mut impl FnMut() -> f64,
) -> (Vec<Vec<f64>>, Vec<[f64; 3]>) {
    let mut u = |lo: f64, hi: f64| lo + (hi - lo) * uniform01();
    let centres: Vec<[f64; 3]> = (0..clusters)
        .map(|_| [u(-PI, PI), u(-PI, PI), u(-PI, PI)])
        .collect();
    let in_clusters = ((m as f64) * frac).round() as usize;
    let mut pts = vec![Vec::with_capacity(m); dim];
    for j in 0..m {
        if j < in_clusters {
            let c = &centres[j * clusters / in_clusters.max(1)];
            for (d, p) in pts.iter_mut().enumerate() {
                // Box-Muller; 1 - u keeps the logarithm finite
                let g = (-2.0 * (1.0 - u(0.0, 1.0)).ln()).sqrt() * (2.0 * PI * u(0.0, 1.0)).cos();
                let sigma = 2.0 * PI * sigma_cells / n[d] as f64;
                p.push(wrap(c[d] + sigma * g));
            }
        } else {
            for p in pts.iter_mut() {
                p.push(u(-PI, PI));
            }
        }
    }
    (pts, centres)
}

// ---------------------------------------------------------------- case selection

/// Which kind of suite-B case a name belongs to, for [`selected`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Group {
    /// B1..B9: uniform points, types 1 and 2
    Uniform,
    /// R2t1..C3t2, N1t1..N5t2, MR*: the radial, clustered, normal and MRI rows
    NonUniform,
    /// T1..T8
    Type3,
}

/// Whether the command-line `args` select case `name`: no args selects all; otherwise a case
/// is selected by its name, `B` selects every uniform type 1/2 case, `B3x` every type-3 case,
/// `NU` every non-uniform one, and a prefix of a non-uniform name its group (`R`, `C2`, ...).
pub fn selected(args: &[String], name: &str, group: Group) -> bool {
    args.is_empty()
        || args.iter().any(|a| {
            a == name
                || (group == Group::Uniform && a == "B")
                || (group == Group::Type3 && a == "B3x")
                || (group == Group::NonUniform
                    && (a == "NU" || (!a.is_empty() && name.starts_with(a.as_str()))))
        })
}

// ---------------------------------------------------------------- roofline

/// The H100's memory bandwidth the floor uses (GB/s; the 3.0 TB/s), unless
/// `WARPFFT_BENCH_BW_GBS` says otherwise.
pub const H100_BW_GBS: f64 = 3000.0;
/// Its non-tensor peaks (GFLOP/s, H100 SXM): f32 and f64, unless `WARPFFT_BENCH_GFLOPS`
/// (one value for both) says otherwise.
pub const H100_GFLOPS_F32: f64 = 67_000.0;
pub const H100_GFLOPS_F64: f64 = 34_000.0;
/// Bytes of the sort index execute reads per point (i64).
pub const INDEX_BYTES: f64 = 8.0;
/// Points of the largest sub-transform one cuFFT pass does in shared memory (model).
pub const FFT_PASS_POINTS: f64 = 4096.0;

/// What execute moves and computes, by part (bytes and flops per execute, all transforms).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Roofline {
    /// fine-grid traffic of spreading/interpolation and (de)convolution, zeroing included
    pub grid_bytes: f64,
    /// the FFT's passes over the fine grid
    pub fft_bytes: f64,
    /// sorted coordinates and the sort index
    pub point_bytes: f64,
    /// strengths c and modes fk (user arrays)
    pub data_bytes: f64,
    /// spreading/interpolation: kernel values and the w^d footprint
    pub spread_flops: f64,
    /// 5 N log2 N per complex transform
    pub fft_flops: f64,
}

impl Roofline {
    pub fn bytes(&self) -> f64 {
        self.grid_bytes + self.fft_bytes + self.point_bytes + self.data_bytes
    }
    pub fn flops(&self) -> f64 {
        self.spread_flops + self.fft_flops
    }
    /// Time the bytes need at `bw_gbs` (ms).
    pub fn memory_ms(&self, bw_gbs: f64) -> f64 {
        self.bytes() / (bw_gbs * 1e9) * 1e3
    }
    /// Time the flops need at `gflops` (ms).
    pub fn compute_ms(&self, gflops: f64) -> f64 {
        self.flops() / (gflops * 1e9) * 1e3
    }
    /// The floor: the larger of the two.
    pub fn floor_ms(&self, bw_gbs: f64, gflops: f64) -> f64 {
        self.memory_ms(bw_gbs).max(self.compute_ms(gflops))
    }
    fn add(self, o: Roofline) -> Roofline {
        Roofline {
            grid_bytes: self.grid_bytes + o.grid_bytes,
            fft_bytes: self.fft_bytes + o.fft_bytes,
            point_bytes: self.point_bytes + o.point_bytes,
            data_bytes: self.data_bytes + o.data_bytes,
            spread_flops: self.spread_flops + o.spread_flops,
            fft_flops: self.fft_flops + o.fft_flops,
        }
    }
}

/// Passes the model's cuFFT makes over the grid: per dimension, one per 4096-point factor
/// (ceil(log2 n_d / 12)), e.g. 2048² and 256³: one per dimension; 1D 2e6: two.
pub fn fft_passes(n_fine: &[i64]) -> usize {
    n_fine
        .iter()
        .filter(|&&n| n > 1)
        .map(|&n| ((n as f64).log2() / FFT_PASS_POINTS.log2()).ceil().max(1.0) as usize)
        .sum()
}

/// The FFT step: each pass reads and writes the batch's grid; 5 N log2 N flops per transform.
fn fft_part(n_fine: &[i64], el: f64, ntransf: f64) -> Roofline {
    let n: f64 = n_fine.iter().map(|&v| v as f64).product();
    Roofline {
        fft_bytes: fft_passes(n_fine) as f64 * 2.0 * n * ntransf * 2.0 * el,
        fft_flops: 5.0 * n * n.log2() * ntransf,
        ..Default::default()
    }
}

/// Spreading or interpolation of `m` points at width `w` in `dim` dimensions: coordinates
/// (sorted copy, el each) and the index read once per execute; per point and transform, dim·w
/// kernel values (a degree-(w+2) polynomial by Horner: 2(w+2) flops each), w^(dim-1) products
/// of the tensor weights and a complex × real multiply-add (4 flops) per footprint cell.
fn spread_part(dim: usize, m: f64, w: f64, el: f64, ntransf: f64) -> Roofline {
    let cells = w.powi(dim as i32);
    let per_point = dim as f64 * w * 2.0 * (w + 2.0) + w.powi(dim as i32 - 1) + 4.0 * cells;
    Roofline {
        point_bytes: m * (dim as f64 * el + INDEX_BYTES),
        spread_flops: m * ntransf * per_point,
        ..Default::default()
    }
}

/// A type 1 or 2 execute (the model; docs/performance.md, "Roofline"). G = the batch's fine
/// grid, F = its mode arrays, C = its strengths (complex, el bytes per real):
/// type 1: zero G, spread into G (one write), FFT, read the modes' part of G (F), write F, read C;
/// type 2: read F, write G (padded), FFT, read G (interpolation), write C.
#[allow(clippy::too_many_arguments)]
pub fn roofline(
    ty: i32,
    dim: usize,
    el: f64,
    n_modes: &[i64],
    n_fine: &[i64],
    w: f64,
    m: f64,
    ntransf: f64,
) -> Roofline {
    let g = n_fine.iter().map(|&v| v as f64).product::<f64>() * ntransf * 2.0 * el;
    let f = n_modes.iter().map(|&v| v as f64).product::<f64>() * ntransf * 2.0 * el;
    let c = m * ntransf * 2.0 * el;
    let part = Roofline {
        grid_bytes: if ty == 1 { 2.0 * g + f } else { 2.0 * g },
        data_bytes: c + f,
        ..Default::default()
    };
    part.add(spread_part(dim, m, w, el, ntransf))
        .add(fft_part(n_fine, el, ntransf))
}

/// A type 3 execute: spread the M sources at width `w` into the grid `n_fine` (zero + write),
/// copy it into the inner type-2 grid `inner_fine` (read + write), FFT that, interpolate the K
/// targets at `inner_w` from it (read), read C (M) and write the K outputs. `el` is the inner
/// steps' real size.
#[allow(clippy::too_many_arguments)]
pub fn roofline3(
    dim: usize,
    el: f64,
    m: f64,
    k: f64,
    n_fine: &[i64],
    w: f64,
    inner_fine: &[i64],
    inner_w: f64,
    ntransf: f64,
) -> Roofline {
    let g = n_fine.iter().map(|&v| v as f64).product::<f64>() * ntransf * 2.0 * el;
    let gi = inner_fine.iter().map(|&v| v as f64).product::<f64>() * ntransf * 2.0 * el;
    let part = Roofline {
        grid_bytes: 2.0 * g + g + gi + gi,
        data_bytes: (m + k) * ntransf * 2.0 * el,
        ..Default::default()
    };
    part.add(spread_part(dim, m, w, el, ntransf))
        .add(spread_part(dim, k, inner_w, el, ntransf))
        .add(fft_part(inner_fine, el, ntransf))
}

// ---------------------------------------------------------------- results

/// One measured case.
pub struct Row {
    pub name: String,
    pub dist: &'static str,
    pub method: String,
    /// the plan was made with opts.deterministic = 1 (bitwise-reproducible: OD spreading and
    /// the stable sort for types 1 and 3)
    pub deterministic: bool,
    pub width: i32,
    /// the upsampling factor the plan used (chosen per plan unless forced)
    pub sigma: f64,
    /// the cost model's prediction of exec_ms (warpfft_plan_info.predicted_ms)
    pub predicted_ms: f64,
    pub plan_ms: f64,
    pub plan2_ms: f64,
    pub setpts_ms: f64,
    pub exec_ms: f64,
    pub ref_ms: f64,
    pub err: f64,
    pub tol: f64,
    pub pts_per_s: f64,
    pub roof: Roof,
}

/// The roofline of one case: the model's bytes and flops, the machine it is measured
/// against, and the fine grid's cuFFT time alone.
pub struct Roof {
    pub model: Roofline,
    pub bw_gbs: f64,
    pub gflops: f64,
    pub n_fine: [i64; 3],
    pub fft_ms: f64,
}

impl Roof {
    pub fn floor_ms(&self) -> f64 {
        self.model.floor_ms(self.bw_gbs, self.gflops)
    }
    pub fn bound(&self) -> &'static str {
        if self.model.memory_ms(self.bw_gbs) >= self.model.compute_ms(self.gflops) {
            "memory"
        } else {
            "compute"
        }
    }
}

/// The column header of [`row_lines`]' first line.
pub fn header() -> String {
    format!(
        "{:<5} {:<6} {:>2} {:>5} {:>9} {:>9} {:>10} {:>10} {:>8} {:>6} {:>9} {:>7} {:>10}",
        "case",
        "method",
        "w",
        "sigma",
        "plan_ms",
        "plan2_ms",
        "setpts_ms",
        "exec_ms",
        "ref_ms",
        "ratio",
        "rel_err",
        "tol",
        "Mpts/s"
    )
}

/// `v` with `prec` decimals, or "-" when it is not a number (no reference, a failed FFT time).
pub fn num(v: f64, width: usize, prec: usize) -> String {
    if v.is_finite() {
        format!("{v:>width$.prec$}")
    } else {
        format!("{:>width$}", "-")
    }
}

/// The case's line and its roofline line.
pub fn row_lines(r: &Row) -> [String; 2] {
    let line = format!(
        "{:<5} {:<6} {:>2} {:>5.3} {:>9.1} {:>9.2} {:>10.3} {:>10.3} {} {} {:>9.2e} {:>7.0e} {:>10.0}{}",
        r.name,
        r.method,
        r.width,
        r.sigma,
        r.plan_ms,
        r.plan2_ms,
        r.setpts_ms,
        r.exec_ms,
        num(r.ref_ms, 8, 2),
        num(r.exec_ms / r.ref_ms, 6, 2),
        r.err,
        r.tol,
        r.pts_per_s / 1e6,
        if r.err > r.tol { "  ERR>TOL" } else { "" }
    );
    let (m, f) = (&r.roof.model, &r.roof);
    let grid: Vec<String> = f
        .n_fine
        .iter()
        .filter(|&&v| v > 1)
        .map(|v| v.to_string())
        .collect();
    let roof = format!(
        "      {} roofline: {:.3} GB (grid {:.3}, fft {:.3}, points {:.3}, c/fk {:.3}), {:.1} GFLOP \
         | fft {} {} ms = {}% of execute | floor {:.3} ms ({}) | execute/floor {:.1} | \
         predicted {} ms",
        r.dist,
        m.bytes() / 1e9,
        m.grid_bytes / 1e9,
        m.fft_bytes / 1e9,
        m.point_bytes / 1e9,
        m.data_bytes / 1e9,
        m.flops() / 1e9,
        grid.join("x"),
        num(f.fft_ms, 0, 3),
        num(100.0 * f.fft_ms / r.exec_ms, 0, 0),
        f.floor_ms(),
        f.bound(),
        r.exec_ms / f.floor_ms(),
        num(r.predicted_ms, 0, 3)
    );
    [line, roof]
}

/// A JSON number, `null` when not finite.
pub fn jnum(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.6e}")
    } else {
        "null".into()
    }
}

/// The case's results-*.json object (the committed files' fields, then issue 12's).
pub fn json_row(r: &Row) -> String {
    let f = &r.roof;
    let m = &f.model;
    format!(
        "{{\"case\":\"{}\",\"method\":\"{}\",\"deterministic\":{},\"width\":{},\"sigma\":{:.4},\"predicted_ms\":{},\"plan_ms\":{:.3},\"setpts_ms\":{:.4},\
         \"exec_ms\":{:.4},\"ref_ms\":{},\"rel_err\":{:.3e},\"tol\":{:e},\"points_per_s\":{:.4e},\
         \"dist\":\"{}\",\"plan2_ms\":{:.3},\"n_fine\":[{},{},{}],\"fft_ms\":{},\"fft_frac\":{},\
         \"bytes\":{},\"grid_bytes\":{},\"fft_bytes\":{},\"point_bytes\":{},\"data_bytes\":{},\
         \"flops\":{},\"bw_gbs\":{},\"gflops\":{},\"floor_ms\":{},\"floor_bound\":\"{}\",\
         \"exec_over_floor\":{}}}",
        r.name,
        r.method,
        r.deterministic,
        r.width,
        r.sigma,
        jnum(r.predicted_ms),
        r.plan_ms,
        r.setpts_ms,
        r.exec_ms,
        if r.ref_ms.is_finite() {
            r.ref_ms.to_string()
        } else {
            "null".into()
        },
        r.err,
        r.tol,
        r.pts_per_s,
        r.dist,
        r.plan2_ms,
        f.n_fine[0],
        f.n_fine[1],
        f.n_fine[2],
        jnum(f.fft_ms),
        jnum(f.fft_ms / r.exec_ms),
        jnum(m.bytes()),
        jnum(m.grid_bytes),
        jnum(m.fft_bytes),
        jnum(m.point_bytes),
        jnum(m.data_bytes),
        jnum(m.flops()),
        jnum(f.bw_gbs),
        jnum(f.gflops),
        jnum(f.floor_ms()),
        f.bound(),
        jnum(r.exec_ms / f.floor_ms())
    )
}
