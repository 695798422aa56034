//! 3D SM spreading at the width whose kernel runs fewer than 256 threads per block (f32 w7: 192;
//! `WF_OD_MIN_BLOCK` in kernels/spreadinterp.cu, the host's
//! `wf_sm_spread_block` in c_core/src/params/bins.c): every cell of a point's W³ footprint must
//! still be added. A host block below the kernel's minimum makes it trap (an execute error here);
//! passes counted for a larger block than the host launches would leave cells out (a wrong sum).
//! The search finds a tol and σ at which the plan takes the width; the table prints it. f64 w10
//! runs beside it: the widest 3D f64 width suite B uses (since wave 4 with the tile in registers,
//! 352 threads). `sm_spread_register_tile` covers the register tile's widths.

use crate::cases::{Case, Dist};
use crate::common::{gpu_or_skip, scaled_points};
use crate::{params_of, run, run_table, try_params_of};

fn case(f64: bool, tol: f64, upsampfac: f64, dist: Dist, ntransf: i64, m: i64) -> Case {
    case_d(3, f64, tol, upsampfac, dist, ntransf, m)
}

fn case_d(dim: i32, f64: bool, tol: f64, upsampfac: f64, dist: Dist, ntransf: i64, m: i64) -> Case {
    let n = if dim == 3 { [24, 25, 26] } else { [100, 90, 1] };
    Case {
        method: 2, // SM
        ntransf,
        upsampfac,
        ..crate::cases::case(dim, 1, f64, tol, n, m, dist)
    }
}

#[test]
fn sm_spread_narrow_blocks() {
    if !gpu_or_skip("gpu_accuracy::sm_spread_narrow_blocks") {
        return;
    }
    let searches: [(bool, i32, &[f64]); 2] = [
        (false, 7, &[1e-5, 3e-6, 3e-5, 1e-6]),
        (true, 10, &[1e-9, 3e-9, 1e-8, 3e-10, 1e-10]),
    ];
    for (f64, want, tols) in searches {
        let mut found = None;
        'search: for up in [2.0, 2.5, 3.0, 1.5] {
            for &tol in tols {
                if let Ok(o) = run(&case(f64, tol, up, Dist::Uniform, 1, 2000), 5) {
                    if o.width == want {
                        found = Some((tol, up));
                        break 'search;
                    }
                }
            }
        }
        let prec = if f64 { "f64" } else { "f32" };
        let (tol, up) = found.unwrap_or_else(|| panic!("no 3D {prec} plan took width {want}"));
        let cases = [
            case(f64, tol, up, Dist::Uniform, 1, 200_000),
            case(f64, tol, up, Dist::Cluster, 3, 50_000),
            case(f64, tol, up, Dist::Tight, 1, 100_000),
            case(f64, tol, up, Dist::Uniform, 2, 7),
        ];
        run_table(
            &format!("3D SM spreading, {prec} width {want} (upsampfac {up})"),
            &cases,
            91,
        );
    }
}

/// SM spreading with the tile in registers (kernels/smr_shape.h: 3D f64 w7-10, 2D f64 w10-16;
/// one thread per tile column, the block sized by the host from the bins, the point batches in
/// shared memory): at the narrowest and widest register-tile widths and one between, and the
/// shared-tile widths next to them (3D w6, w11, w14; 2D w9), each against the exact sums with
/// uniform points, a cluster (every point in one bin: many subproblems of one bin, several
/// batches each) over 3 transforms, a tight cloud, and 7 points over 2 transforms; then bins
/// given in opts.bin_size that the host must fit (the last extent to NR - 2 pad, the others
/// halved until the block fits the register file). A launch the kernel does not accept traps
/// (an execute error here); cells a column misses give a wrong sum.
#[test]
fn sm_spread_register_tile() {
    let targets: [(i32, i32); 10] = [
        (3, 6),
        (3, 7),
        (3, 10),
        (3, 11),
        (3, 14),
        (3, 15),
        (2, 9),
        (2, 10),
        (2, 13),
        (2, 16),
    ];
    // the cases and the host's fitting of given bins first (no GPU needed), then the runs
    let mut tables = Vec::new();
    for (dim, want) in targets {
        // a (tol, upsampfac) at which the plan takes width `want`, by the host's own rule
        let mut found = None;
        'search: for up in [2.0, 1.5, 2.5, 3.0, 1.25] {
            for k in 4..=56 {
                let tol = 10f64.powf(-(k as f64) / 4.0);
                let c = case_d(dim, true, tol, up, Dist::Uniform, 1, 1000);
                if try_params_of(&c).is_ok_and(|info| info.width == want) {
                    found = Some((tol, up));
                    break 'search;
                }
            }
        }
        let (tol, up) = found.unwrap_or_else(|| panic!("no {dim}D f64 plan took width {want}"));
        let m = scaled_points(if dim == 3 { 200_000 } else { 500_000 }) as i64;
        let mut cases = vec![
            case_d(dim, true, tol, up, Dist::Uniform, 1, m),
            case_d(dim, true, tol, up, Dist::Cluster, 3, m / 4),
            case_d(dim, true, tol, up, Dist::Tight, 1, m / 2),
            case_d(dim, true, tol, up, Dist::Uniform, 2, 7),
        ];
        // given bins the host must fit; in 2D on a grid wide enough that a tile row of them
        // needs more warps than a block may have
        let mut given = case_d(dim, true, tol, up, Dist::Uniform, 2, m / 2);
        given.bin_size = if dim == 3 {
            [32, 32, 16]
        } else {
            [1000, 50, 0]
        };
        if dim == 2 {
            given.n = [400, 60, 1];
        }
        let info = params_of(&given);
        let (bs, w) = (info.bin_size, info.width);
        let pad2 = 2 * ((w + 1) / 2);
        let columns = if dim == 3 {
            (bs[0] + pad2) * (bs[1] + pad2)
        } else {
            bs[0] + pad2
        };
        println!(
            "{dim}D f64 w{w}: opts.bin_size {:?} -> {:?} ({columns} tile columns)",
            given.bin_size, bs
        );
        if (dim == 3 && (7..=10).contains(&w)) || (dim == 2 && w >= 10) {
            // the register tile: its last extent fits NR (4 + 2 pad in 3D, 2 + 2 pad in 2D),
            // its block at most the 11 warps the H100 ran (params/bins.c)
            let nr = if dim == 3 { 4 + pad2 } else { 2 + pad2 };
            let last = bs[dim as usize - 1];
            assert!(
                last + pad2 <= nr && columns <= 32 * 11,
                "{dim}D w{w}: bins {bs:?} do not fit the register tile (NR {nr})"
            );
        }
        cases.push(given);
        tables.push((
            format!("SM spreading, {dim}D f64 width {want} (upsampfac {up})"),
            cases,
        ));
    }
    if !gpu_or_skip("gpu_accuracy::sm_spread_register_tile") {
        return;
    }
    for (i, (name, cases)) in tables.iter().enumerate() {
        run_table(name, cases, 97 + i as u64);
    }
}
