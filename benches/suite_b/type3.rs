//! Suite B's type-3 rows (T1..T8, `-- B3x`; benches/suite_b/cases.rs `SUITE3`): one case
//! timed and checked. A child module of benches/suite_b.rs, whose helpers (plan timing, options,
//! the machine's peaks, the fine grid's FFT time, the peer's column) it shares.

use super::cases::Bench3;
use super::*;

/// A type-3 case: plan, setpts3 (median of 5), execute (median of `reps` after 3 warm-ups),
/// error on 1024 stratified targets of transform 0 against warpfft_direct_sample3.
pub(super) fn run3(b: &Bench3, v: Variant, reps: usize) -> Result<Row, String> {
    let mut rng = Rng::new(43);
    let prec = precision(b.f64);
    let el = real_bytes(b.f64);
    let pi = std::f64::consts::PI;
    let gen = |rng: &mut Rng, n: i64, lo: f64, hi: f64| {
        Dev::from_reals(
            b.f64,
            &(0..n).map(|_| rng.range(lo, hi)).collect::<Vec<_>>(),
        )
    };
    let x: Vec<Dev> = (0..b.dim).map(|_| gen(&mut rng, b.m, -pi, pi)).collect();
    let s: Vec<Dev> = (0..b.dim)
        .map(|_| gen(&mut rng, b.k, -b.smax, b.smax))
        .collect();
    let input = gen(&mut rng, 2 * b.m, -1.0, 1.0);
    let output = Dev::new(2 * b.k as usize * el);
    let xp = |d: usize| point_ptr(&x, d);
    let sp = |d: usize| point_ptr(&s, d);

    let opts = bench_opts(v, b.m);
    let create = |plan: &mut sys::warpfft_plan| unsafe {
        sys::warpfft_plan_create(3, b.dim, std::ptr::null(), 1, 1, b.tol, prec, &opts, plan)
    };
    let setpts = |plan| {
        let st = unsafe {
            sys::warpfft_setpts3(
                plan,
                prec,
                b.m,
                xp(0),
                xp(1),
                xp(2),
                b.k,
                sp(0),
                sp(1),
                sp(2),
            )
        };
        if st != sys::WARPFFT_SUCCESS {
            return Err(last_error());
        }
        Ok(())
    };
    let timed = measure(create, setpts, prec, input.ptr, output.ptr, reps)?;
    let sample = stratified_sample(&mut rng, b.k, 1024);
    let mut exact = vec![0.0f64; 2 * sample.len()];
    check(
        unsafe {
            sys::warpfft_direct_sample3(
                b.dim,
                1,
                prec,
                0,
                b.m,
                xp(0),
                xp(1),
                xp(2),
                input.ptr,
                b.k,
                sp(0),
                sp(1),
                sp(2),
                sample.len() as i64,
                sample.as_ptr(),
                exact.as_mut_ptr(),
            )
        },
        "direct_sample3",
    );
    let out = output.reals(b.f64, 2 * b.k as usize);
    let approx = gather(&out, 0, &sample);
    let info = &timed.info;
    println!(
        "{:<4} type 3: grid {:?} inner {:?} w {}/{} internal {} | reference: {:.2} ms, rel err {:.1e}",
        b.name,
        &info.n_fine[..b.dim as usize],
        &info.inner_fine[..b.dim as usize],
        info.width,
        info.inner_width,
        if info.inner_precision == sys::WARPFFT_F64 as i32 { "f64" } else { "f32" },
        b.ref_ms,
        b.ref_err
    );
    let dim = b.dim as usize;
    let inner_f64 = info.inner_precision == sys::WARPFFT_F64 as i32;
    let (bw_gbs, gflops) = machine(inner_f64);
    let roof = Roof {
        model: model::roofline3(
            dim,
            if inner_f64 { 8.0 } else { 4.0 },
            b.m as f64,
            b.k as f64,
            &info.n_fine[..dim],
            info.width as f64,
            &info.inner_fine[..dim],
            info.inner_width as f64,
            1.0,
        ),
        bw_gbs,
        gflops,
        n_fine: info.inner_fine,
        fft_ms: fft_ms(b.dim, info.inner_fine, inner_f64, 1, reps),
    };
    let err = rel_l2(&approx, &exact);
    Ok(timed.row(
        b.name,
        "uniform",
        peer_ms(b.name),
        b.tol,
        b.m + b.k,
        err,
        roof,
    ))
}
