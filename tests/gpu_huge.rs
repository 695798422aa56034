//! 64-bit sizes on a GPU: more than 2^31 points (1D type 1, f32, N = 1e6, M = 2^31 + 7) and
//! more than 2^31 modes (2D type 2, f32, N = 46342^2 at upsampfac 1.25, M = 1e6), each checked
//! against the exact sum. They need ~95 and ~75 GB of device memory (an H200), so they run only
//! with `WARPFFT_HUGE_TESTS=1` on a GPU that has it, and say why they skip otherwise.
//!
//! Why not 1D with N > 2^31: its fine grid would pass 2^32 points, where cuFFT's transforms
//! were measured wrong (H200, cuFFT 12.0: errors up to 0.8 at 4299816960 points, C2C and Z2Z
//! alike, exact at 2^32), so plans stop at 2^32 fine points per dimension (c_core params.h).

mod common;
use common::*;
use std::os::raw::c_void;
use warpfft::sys;

const GB: f64 = 1e9;

/// The two tests cannot share one GPU's memory: they take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Total memory of device 0, from the runtime information's JSON.
fn device_memory_bytes() -> f64 {
    let text = warpfft::runtime_info(0).expect("runtime_info");
    let key = "\"memory_bytes\":";
    let at = text.find(key).expect("memory_bytes in runtime_info") + key.len();
    let digits: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().expect("memory_bytes is a number")
}

fn huge_or_skip(test: &str, need: f64) -> bool {
    if std::env::var("WARPFFT_HUGE_TESTS").as_deref() != Ok("1") {
        eprintln!(
            "skipped: {test}: needs ~{:.0} GB of device memory; set WARPFFT_HUGE_TESTS=1 on \
             such a GPU",
            need / GB
        );
        return false;
    }
    if !gpu_or_skip(test) {
        return false;
    }
    let have = device_memory_bytes();
    if have < need {
        eprintln!(
            "skipped: {test}: needs ~{:.0} GB of device memory, the GPU has {:.0}",
            need / GB,
            have / GB
        );
        return false;
    }
    true
}

/// A device array of `n` f32 values filled chunk by chunk from `fill` (host memory stays at
/// one chunk).
fn upload_f32(n: usize, mut fill: impl FnMut(&mut [f32])) -> Dev {
    let d = Dev::new(n * 4);
    let mut chunk = vec![0f32; 1 << 26];
    let mut off = 0usize;
    while off < n {
        let len = chunk.len().min(n - off);
        fill(&mut chunk[..len]);
        check(
            unsafe {
                sys::warpfft_memcpy_htod(
                    0,
                    (d.ptr as *mut f32).add(off) as *mut c_void,
                    chunk.as_ptr() as *const c_void,
                    len * 4,
                )
            },
            "memcpy_htod",
        );
        off += len;
    }
    d
}

/// One f32 plan through create, setpts and execute; returns the relative l2 error of 65
/// sampled outputs against the exact sum (double, on the GPU).
#[allow(clippy::too_many_arguments)]
fn run(
    ty: i32,
    nm: [i64; 3],
    upsampfac: f64,
    m: i64,
    pts: &[Dev],
    input: &Dev,
    out_len: usize,
    tol: f64,
) -> f64 {
    let dim = pts.len() as i32;
    let mut plan: sys::warpfft_plan = std::ptr::null_mut();
    let mut opts: sys::warpfft_opts = unsafe { std::mem::zeroed() };
    unsafe { sys::warpfft_opts_default(&mut opts) };
    opts.upsampfac = upsampfac;
    check(
        unsafe {
            sys::warpfft_plan_create(
                ty,
                dim,
                nm.as_ptr(),
                1,
                1,
                tol,
                sys::WARPFFT_F32,
                &opts,
                &mut plan,
            )
        },
        "plan_create",
    );
    let _guard = PlanGuard(plan);
    let ptr = |d: usize| point_ptr(pts, d);
    check(
        unsafe { sys::warpfft_setpts(plan, sys::WARPFFT_F32, m, ptr(0), ptr(1), ptr(2)) },
        "setpts",
    );
    let output = Dev::new(out_len * 8);
    let (c, fk) = if ty == 1 {
        (input.ptr, output.ptr)
    } else {
        (output.ptr, input.ptr)
    };
    check(
        unsafe { sys::warpfft_execute(plan, sys::WARPFFT_F32, c, fk) },
        "execute",
    );
    check(unsafe { sys::warpfft_stream_sync(0, 0) }, "sync");
    let info = plan_info(plan);
    assert_eq!(info.n_points, m);
    assert_eq!(info.n_modes, nm);
    // 64 stratified outputs plus the last one
    let mut sample = stratified_sample(&mut Rng::new(3), out_len as i64, 64);
    sample.push(out_len as i64 - 1);
    let approx = gather(&output.reals(false, 2 * out_len), 0, &sample);
    let exact = Exact {
        ty,
        dim,
        n: nm,
        modeord: 0,
        f64: false,
        m,
        pts,
    }
    .sample(input.ptr, &sample);
    let err = rel_l2(&approx, &exact);
    println!(
        "type {ty}, N = {:?}, M = {m}: width {}, fine grid {:?}, relative l2 error {err:.2e} at \
         {} outputs (tol {tol:.0e})",
        &nm[..dim as usize],
        info.width,
        &info.n_fine[..dim as usize],
        sample.len()
    );
    err
}

#[test]
fn points_beyond_int32() {
    let m: i64 = (1 << 31) + 7;
    // x 8.6 GB, c 17.2 GB; setpts: sort_idx 17.2, records 17.2, pos_in_bin 8.6, bin_of 8.6,
    // sorted x 8.6
    if !huge_or_skip("gpu_huge::points_beyond_int32", 95e9) {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let pi = std::f32::consts::PI;
    let mut rng = Rng::new(11);
    let x = upload_f32(m as usize, |v| {
        v.iter_mut()
            .for_each(|a| *a = (rng.range(-1.0, 1.0) as f32) * pi)
    });
    let c = upload_f32(2 * m as usize, |v| {
        v.iter_mut().for_each(|a| *a = rng.range(-1.0, 1.0) as f32)
    });
    let n = 1_000_000i64;
    let err = run(
        1,
        [n, 1, 1],
        2.0,
        m,
        std::slice::from_ref(&x),
        &c,
        n as usize,
        1e-5,
    );
    assert!(err <= 1e-5, "relative l2 error {err:.3e} > tol 1e-5");
}

#[test]
fn modes_beyond_int32() {
    // 46342^2 = 2147488964 > 2^31 modes; at upsampfac 1.25 the fine grid is ~58000^2 (27 GB)
    let n: i64 = 46342;
    let nm = [n, n, 1];
    // fk 17.2 GB, fine grid and cuFFT's work area ~27 GB each
    if !huge_or_skip("gpu_huge::modes_beyond_int32", 75e9) {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let m = 1_000_000i64;
    let pi = std::f32::consts::PI;
    let mut rng = Rng::new(12);
    let pts: Vec<Dev> = (0..2)
        .map(|_| {
            upload_f32(m as usize, |v| {
                v.iter_mut()
                    .for_each(|a| *a = (rng.range(-1.0, 1.0) as f32) * pi)
            })
        })
        .collect();
    // coefficients: random, a fresh chunk every time (host memory stays at one chunk)
    let fk = upload_f32(2 * (n * n) as usize, |v| {
        v.iter_mut().for_each(|a| *a = rng.range(-1.0, 1.0) as f32)
    });
    // f32 at upsampfac 1.25 supports tol >= 1e-4 (docs/accuracy.md)
    let err = run(2, nm, 1.25, m, &pts, &fk, m as usize, 1e-4);
    assert!(err <= 1e-4, "relative l2 error {err:.3e} > tol 1e-4");
}
