//! 3D SM spreading at the width whose kernel runs fewer than 256 threads per block (f32 w7: 192;
//! `WF_OD_MIN_BLOCK` in kernels/spreadinterp.cu, the host's
//! `wf_sm_spread_block` in c_core/src/params/bins.c): every cell of a point's W³ footprint must
//! still be added. A host block below the kernel's minimum makes it trap (an execute error here);
//! passes counted for a larger block than the host launches would leave cells out (a wrong sum).
//! The search finds a tol and σ at which the plan takes the width; the table prints it. f64 w10
//! (256 threads, 8x8x4 bins) runs beside it: the widest 3D f64 width suite B uses.

use crate::cases::{Case, Dist};
use crate::common::gpu_or_skip;
use crate::{run, run_table};

fn case(f64: bool, tol: f64, upsampfac: f64, dist: Dist, ntransf: i64, m: i64) -> Case {
    Case {
        dim: 3,
        ty: 1,
        f64,
        tol,
        method: 2, // SM
        modeord: 0,
        ntransf,
        n: [24, 25, 26],
        m,
        dist,
        upsampfac,
        edge_only: false,
        bin_size: [0; 3],
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
