//! Suite B's host-only parts (benches/suite_b/model.rs): the radial and clustered point sets
//! and the roofline model. No GPU needed.

#[path = "../benches/suite_b/model.rs"]
mod model;
use model::*;
use std::f64::consts::PI;

/// A small deterministic generator of uniform numbers in [0, 1) (xorshift64*).
fn uniform01(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed.max(1);
    move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn in_range(pts: &[Vec<f64>]) -> bool {
    pts.iter().flatten().all(|&x| (-PI..PI).contains(&x))
}

#[test]
fn wrap_folds_into_the_half_open_period() {
    for (x, want) in [
        (0.0, 0.0),
        (PI, -PI),
        (-PI, -PI),
        (3.0 * PI + 0.5, -PI + 0.5),
        (-PI - 0.25, PI - 0.25),
    ] {
        assert!((wrap(x) - want).abs() < 1e-12, "wrap({x}) = {}", wrap(x));
    }
}

#[test]
fn radial_2d_spokes_pass_through_the_centre_at_uniform_angles() {
    let (spokes, samples) = (64, 200);
    let p = radial(2, spokes, samples);
    assert_eq!(p.len(), 2);
    assert!(p.iter().all(|v| v.len() == spokes * samples));
    assert!(in_range(&p));
    for s in 0..spokes {
        let th = PI * s as f64 / spokes as f64;
        for j in 0..samples {
            let (x, y) = (p[0][s * samples + j], p[1][s * samples + j]);
            // on the line through 0 at angle th, at signed radius -π + 2πj/samples
            assert!(
                (x * th.sin() - y * th.cos()).abs() < 1e-12,
                "spoke {s} sample {j}"
            );
            let r = -PI + 2.0 * PI * j as f64 / samples as f64;
            assert!((x * th.cos() + y * th.sin() - r).abs() < 1e-12);
        }
        // the centre is sampled on every spoke
        let c = s * samples + samples / 2;
        assert!(p[0][c].abs() < 1e-15 && p[1][c].abs() < 1e-15);
    }
}

#[test]
fn radial_is_dense_near_the_centre() {
    for dim in [2, 3] {
        let p = radial(dim, 500, 256);
        assert!(in_range(&p));
        let m = p[0].len();
        let near = (0..m)
            .filter(|&j| (0..dim).map(|d| p[d][j] * p[d][j]).sum::<f64>().sqrt() < PI / 8.0)
            .count() as f64
            / m as f64;
        // along a spoke the radius is uniform: 1/8 of the samples lie within π/8 of k = 0,
        // where uniform points would put (π/8)^d·(volume of the unit ball)/(2π)^d of them
        let uniform = if dim == 2 {
            PI * (PI / 8.0).powi(2) / (2.0 * PI).powi(2)
        } else {
            4.0 / 3.0 * PI * (PI / 8.0).powi(3) / (2.0 * PI).powi(3)
        };
        assert!((near - 0.125).abs() < 0.01, "{dim}D: {near}");
        assert!(near > 10.0 * uniform, "{dim}D: {near} vs uniform {uniform}");
    }
}

#[test]
fn radial_3d_directions_cover_the_half_sphere() {
    let spokes = 2000;
    let dirs: Vec<[f64; 3]> = (0..spokes).map(|i| spoke_direction(3, i, spokes)).collect();
    for u in &dirs {
        assert!((u[0] * u[0] + u[1] * u[1] + u[2] * u[2] - 1.0).abs() < 1e-12);
        assert!(u[2] > 0.0 && u[2] < 1.0);
    }
    // uniform on the half sphere: z uniform in (0, 1), and the azimuths balanced
    let mean = |f: &dyn Fn(&[f64; 3]) -> f64| dirs.iter().map(f).sum::<f64>() / spokes as f64;
    assert!((mean(&|u| u[2]) - 0.5).abs() < 1e-3);
    assert!(mean(&|u| u[0]).abs() < 0.02 && mean(&|u| u[1]).abs() < 0.02);
    // no two spokes coincide
    let mut close = 0;
    for i in 0..200 {
        for j in i + 1..200 {
            let d: f64 = (0..3).map(|k| (dirs[i][k] - dirs[j][k]).powi(2)).sum();
            close += (d < 1e-6) as i32;
        }
    }
    assert_eq!(close, 0);
}

#[test]
fn clustered_puts_the_chosen_fraction_in_small_regions() {
    // suite B's C2 and C3 parameters
    for (dim, n, sc) in [(2usize, [1024i64, 1024, 1], 4.0), (3, [128, 128, 128], 2.0)] {
        let (m, k, frac) = (200_000, 16, 0.9);
        let (p, centres) = clustered(dim, m, n, k, frac, sc, &mut uniform01(7));
        assert_eq!(centres.len(), k);
        assert!(p.len() == dim && p.iter().all(|v| v.len() == m));
        assert!(in_range(&p));
        // periodic distance to the nearest centre, in cluster standard deviations
        let sigma = |d: usize| 2.0 * PI * sc / n[d] as f64;
        let within = |j: usize, radius: f64| {
            centres.iter().any(|c| {
                (0..dim)
                    .map(|d| (wrap(p[d][j] - c[d]) / sigma(d)).powi(2))
                    .sum::<f64>()
                    .sqrt()
                    < radius
            })
        };
        let count = |r: f64| (0..m).filter(|&j| within(j, r)).count() as f64 / m as f64;
        // a d-dimensional Gaussian puts ≥ 97% within 4σ (d ≤ 3); the uniform rest adds little
        let c4 = count(4.0);
        assert!(
            c4 > 0.97 * frac && c4 < frac + 0.02,
            "{dim}D: {c4} within 4σ"
        );
        // and those 4σ balls are under 2% of the volume
        let r = 4.0 * sigma(0) / (2.0 * PI);
        let ball = if dim == 2 {
            PI * r * r
        } else {
            4.0 / 3.0 * PI * r * r * r
        };
        let vol = ball * k as f64;
        assert!(vol < 0.02, "{dim}D: the clusters' 4σ balls cover {vol}");
        // deterministic for a seed; another seed moves the centres
        let (q, _) = clustered(dim, m, n, k, frac, sc, &mut uniform01(7));
        assert_eq!(p, q);
        let (_, other) = clustered(dim, m, n, k, frac, sc, &mut uniform01(8));
        assert_ne!(centres, other);
    }
}

#[test]
fn fft_passes_per_dimension() {
    assert_eq!(fft_passes(&[2048, 2048]), 2);
    assert_eq!(fft_passes(&[256, 256, 256]), 3);
    assert_eq!(fft_passes(&[2_000_000]), 2);
    assert_eq!(fft_passes(&[4096]), 1);
    assert_eq!(fft_passes(&[4097]), 2);
    assert_eq!(fft_passes(&[512, 512, 1]), 2);
}

#[test]
fn roofline_type1_by_hand() {
    // 2D f32 32x16 modes, fine 64x32, w 4, M 1000, 2 transforms
    let r = roofline(1, 2, 4.0, &[32, 16], &[64, 32], 4.0, 1000.0, 2.0);
    let g = 64.0 * 32.0 * 2.0 * 8.0;
    let f = 32.0 * 16.0 * 2.0 * 8.0;
    let c = 1000.0 * 2.0 * 8.0;
    assert_eq!(r.grid_bytes, 2.0 * g + f);
    assert_eq!(r.fft_bytes, 2.0 * 2.0 * g); // two passes, each a read and a write
    assert_eq!(r.point_bytes, 1000.0 * (2.0 * 4.0 + 8.0));
    assert_eq!(r.data_bytes, c + f);
    assert_eq!(r.bytes(), 2.0 * g + f + 4.0 * g + 16000.0 + c + f);
    let per_point = 2.0 * 4.0 * 2.0 * 6.0 + 4.0 + 4.0 * 16.0;
    assert_eq!(r.spread_flops, 2000.0 * per_point);
    let n = 64.0 * 32.0;
    assert!((r.fft_flops - 2.0 * 5.0 * n * 11.0).abs() < 1e-6);
    // floor: bytes at 1 GB/s = bytes/1e6 ms; compute at 1 GFLOP/s = flops/1e6 ms
    assert!((r.memory_ms(1.0) - r.bytes() / 1e6).abs() < 1e-9);
    assert!((r.compute_ms(1.0) - r.flops() / 1e6).abs() < 1e-9);
    assert_eq!(r.floor_ms(1.0, 1e9), r.memory_ms(1.0));
    assert_eq!(r.floor_ms(1e9, 1.0), r.compute_ms(1.0));
}

#[test]
fn roofline_type2_mirrors_type1_and_scales() {
    let args = |ty| {
        roofline(
            ty,
            3,
            4.0,
            &[128, 128, 128],
            &[256, 256, 256],
            7.0,
            1e7,
            1.0,
        )
    };
    let (t1, t2) = (args(1), args(2));
    let f = 128f64.powi(3) * 8.0;
    // type 1 reads the modes' part of the grid in deconvolution; type 2 reads the grid in
    // interpolation instead: the same except for that one read
    assert_eq!(t1.bytes() - t2.bytes(), f);
    assert_eq!(t1.grid_bytes - t2.grid_bytes, f);
    assert_eq!(t1.fft_bytes, t2.fft_bytes);
    assert_eq!(t1.spread_flops, t2.spread_flops);
    // f64 moves twice the bytes of grid and data; a batch of 4 four times the grid's
    let d = roofline(1, 3, 8.0, &[128, 128, 128], &[256, 256, 256], 7.0, 1e7, 1.0);
    assert_eq!(d.grid_bytes, 2.0 * t1.grid_bytes);
    let b = roofline(1, 3, 4.0, &[128, 128, 128], &[256, 256, 256], 7.0, 1e7, 4.0);
    assert_eq!(b.grid_bytes, 4.0 * t1.grid_bytes);
    assert_eq!(b.point_bytes, t1.point_bytes); // one point set for the batch
                                               // B4 at 3.0 TB/s: ~0.6 GB, a floor of about 0.2 ms
    let ms = t1.memory_ms(H100_BW_GBS);
    assert!(ms > 0.1 && ms < 0.5, "{ms}");
}

#[test]
fn roofline3_counts_both_grids_and_both_point_sets() {
    let r = roofline3(2, 8.0, 1e6, 2e6, &[100, 100], 8.0, &[300, 300], 6.0, 1.0);
    let g = 1e4 * 16.0;
    let gi = 9e4 * 16.0;
    assert_eq!(r.grid_bytes, 3.0 * g + 2.0 * gi);
    assert_eq!(r.data_bytes, 3e6 * 16.0);
    assert_eq!(r.point_bytes, 3e6 * (2.0 * 8.0 + 8.0));
    assert_eq!(r.fft_bytes, 2.0 * 2.0 * gi);
}

#[test]
fn selection_by_name_and_group() {
    use Group::{NonUniform, Type3, Uniform};
    // (the run's arguments, a case's name, its group, whether the case runs)
    let table: &[(&[&str], &str, Group, bool)] = &[
        (&[], "B1", Uniform, true),
        (&[], "C3t2", NonUniform, true),
        (&["B2"], "B2", Uniform, true),
        (&["B2"], "B3", Uniform, false),
        (&["B3x"], "T5", Type3, true),
        (&["B3x"], "B3", Uniform, false),
        (&["B"], "B9", Uniform, true),
        (&["B"], "T1", Type3, false),
        (&["B"], "R2t1", NonUniform, false),
        (&["R2"], "R2t1", NonUniform, true),
        (&["R2"], "R2t2", NonUniform, true),
        (&["R2"], "R3t1", NonUniform, false),
        (&["C"], "C3t1", NonUniform, true),
        (&["C"], "R3t1", NonUniform, false),
        (&["NU"], "R3t2", NonUniform, true),
        (&["NU"], "B4", Uniform, false),
        (&["T1", "R3t1"], "R3t1", NonUniform, true),
        // a prefix names non-uniform groups only: "B" is its own group, "T" nothing
        (&["T"], "T1", Type3, false),
        (&[""], "R2t1", NonUniform, false),
    ];
    for &(args, name, group, runs) in table {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            selected(&args, name, group),
            runs,
            "{args:?} selecting {name} ({group:?})"
        );
    }
}

fn sample_row(ref_ms: f64, fft_ms: f64) -> Row {
    let model = roofline(1, 2, 4.0, &[1024, 1024], &[2048, 2048], 7.0, 1e7, 1.0);
    Row {
        name: "R2t1".into(),
        dist: "radial",
        method: "SM".into(),
        deterministic: false,
        width: 7,
        sigma: 2.0,
        predicted_ms: 1.9,
        plan_ms: 120.5,
        plan2_ms: 0.8,
        setpts_ms: 1.1,
        exec_ms: 2.0,
        ref_ms,
        err: 7e-7,
        tol: 1e-5,
        pts_per_s: 5e9,
        roof: Roof {
            model,
            bw_gbs: H100_BW_GBS,
            gflops: H100_GFLOPS_F32,
            n_fine: [2048, 2048, 1],
            fft_ms,
        },
    }
}

#[test]
fn row_lines_show_the_roofline() {
    let r = sample_row(f64::NAN, 0.25);
    let [line, roof] = row_lines(&r);
    assert!(line.starts_with("R2t1 "), "{line}");
    assert!(line.contains("0.80") && line.contains("120.5"), "{line}");
    // no reference: "-" for ref_ms and the ratio, never NaN
    assert!(!line.contains("NaN") && line.contains(" - "), "{line}");
    assert!(roof.contains("radial roofline"), "{roof}");
    assert!(
        roof.contains("fft 2048x2048 0.250 ms = 12% of execute"),
        "{roof}"
    );
    let floor = r.roof.floor_ms();
    assert!(
        roof.contains(&format!("floor {floor:.3} ms (memory)")),
        "{roof}"
    );
    assert!(
        roof.contains(&format!("execute/floor {:.1}", 2.0 / floor)),
        "{roof}"
    );
    assert_eq!(
        header().split_whitespace().count(),
        line.split_whitespace().count()
    );
    // a failed FFT time prints "-"
    let [_, roof] = row_lines(&sample_row(2.07, f64::NAN));
    assert!(
        roof.contains("fft 2048x2048 - ms = -% of execute"),
        "{roof}"
    );
}

#[test]
fn json_row_is_valid_json_with_the_new_fields() {
    let rows = [sample_row(f64::NAN, 0.25), sample_row(2.07, f64::NAN)];
    let text = format!(
        "[\n{}\n]\n",
        rows.iter().map(json_row).collect::<Vec<_>>().join(",\n")
    );
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    for key in [
        "\"case\":\"R2t1\"",
        "\"dist\":\"radial\"",
        "\"plan2_ms\":0.800",
        "\"n_fine\":[2048,2048,1]",
        "\"fft_ms\":null",
        "\"ref_ms\":null",
        "\"ref_ms\":2.07",
        "\"floor_bound\":\"memory\"",
        "\"exec_over_floor\":",
        "\"bytes\":",
        "\"flops\":",
        "\"bw_gbs\":3.000000e3",
        "\"deterministic\":false",
    ] {
        assert!(text.contains(key), "{key} missing in {text}");
    }
    // a real JSON parser agrees (python3, as the scripts use; skipped visibly without it)
    let py = std::process::Command::new("python3")
        .args([
            "-c",
            "import json,sys; d=json.load(sys.stdin); assert len(d)==2 and d[0]['fft_frac']>0",
        ])
        .stdin(std::process::Stdio::piped())
        .spawn();
    match py {
        Ok(mut child) => {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            assert!(child.wait().unwrap().success(), "python3 rejected:\n{text}");
        }
        Err(e) => eprintln!("skipped: the python3 JSON check ({e})"),
    }
}

#[test]
fn normal_points_fold_a_unit_gaussian_into_the_box() {
    let m = 200_000;
    let p = normal(3, m, 1.0, &mut uniform01(7));
    assert_eq!(p.len(), 3);
    assert!(p.iter().all(|v| v.len() == m));
    assert!(in_range(&p));
    for v in &p {
        // std 1 folded: almost nothing wraps (P(|g| > π) = 0.17%), so the moments are the
        // Gaussian's; the central third of the box holds P(|g| < π/3) = 70.6%
        let mean = v.iter().sum::<f64>() / m as f64;
        let var = v.iter().map(|x| x * x).sum::<f64>() / m as f64;
        let centre = v.iter().filter(|x| x.abs() < PI / 3.0).count() as f64 / m as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.03, "variance {var}");
        assert!((centre - 0.706).abs() < 0.01, "central third {centre}");
    }
}

#[test]
fn spiral_arms_start_at_the_centre_and_reach_the_edge() {
    let (arms, samples) = (4, 1000);
    let p = spiral(arms, samples, 8.0, 1.0);
    assert_eq!(p.len(), 2);
    assert!(p.iter().all(|v| v.len() == arms * samples));
    assert!(in_range(&p));
    for a in 0..arms {
        let first = a * samples;
        assert!(
            p[0][first].abs() < 1e-15 && p[1][first].abs() < 1e-15,
            "arm {a} starts at 0"
        );
        let last = first + samples - 1;
        let r = (p[0][last].powi(2) + p[1][last].powi(2)).sqrt();
        assert!((r - PI * (samples - 1) as f64 / samples as f64).abs() < 1e-12);
        // the radius grows along the arm
        for j in 1..samples {
            let r0 = p[0][first + j - 1].hypot(p[1][first + j - 1]);
            let r1 = p[0][first + j].hypot(p[1][first + j]);
            assert!(r1 > r0);
        }
    }
}
