//! What a plan and the runtime report: plan info and workspace, runtime_info, the plan cache
//! (a second plan of a shape is fast), and the bench_fft tuning aid.

use crate::common::Rng;
use crate::PI;
use warpfft::{Error, Plan};

#[test]
fn info_and_workspace() {
    require_gpu!();
    let builder = Plan::<f64>::type1(&[32, 16, 8]).tol(1e-7).ntransf(2);
    let params = builder.params().unwrap();
    let mut plan = builder.build().unwrap();
    let info = plan.info().unwrap();
    assert_eq!(info.width, params.width);
    assert_eq!(info.n_fine, params.n_fine);
    assert_eq!(info.n_modes, [32, 16, 8]);
    assert_eq!(info.ntransf, 2);
    assert_ne!(
        info.method,
        warpfft::Method::Auto,
        "a plan reports the method it uses"
    );
    assert_eq!(info.n_points, None);
    let ws = plan.workspace_bytes().unwrap();
    let fine: usize = info.n_fine.iter().product();
    assert!(
        ws >= fine * 16,
        "workspace {ws} B < one f64 fine grid ({fine} points)"
    );
    assert_eq!(info.workspace_bytes, ws);

    let mut rng = Rng::from_state(1);
    let pts: Vec<Vec<f64>> = rng.coords(3, 123, PI);
    plan.set_points(&pts).unwrap();
    assert_eq!(plan.info().unwrap().n_points, Some(123));
    assert_eq!(plan.n_points(), Some(123));
}

#[test]
fn runtime_info_on_a_gpu() {
    require_gpu!();
    let json = warpfft::runtime_info(0).unwrap();
    assert!(json.trim_start().starts_with('{'), "{json}");
    assert!(
        json.contains("sm"),
        "runtime info names the GPU's sm: {json}"
    );
    let e = warpfft::runtime_info(4096).unwrap_err();
    assert!(matches!(e, Error::NoDevice(_)), "device 4096: {e:?}");
    assert!(warpfft::runtime_report(4096).json().starts_with('{'));
}

/// The number after `"key":` in the first place it occurs in `json` at or after `from`.
fn json_number(json: &str, from: &str, key: &str) -> f64 {
    let start = json.find(from).unwrap_or(0);
    let pat = format!("\"{key}\":");
    let at = json[start..].find(&pat).expect(key) + start + pat.len();
    let end = json[at..].find([',', '}']).expect("a number") + at;
    json[at..end].parse().expect("a number")
}

/// Issue 12: a plan created after the first of its shape takes its cuFFT plan, work area, fine
/// grid and deconvolution factors from the plan cache and takes at most a millisecond or so
/// (the accuracy tests run five of their six plans per shape from the cache: same results).
/// runtime_info reports the cache and where plan creation spent its time.
#[test]
fn second_plan_of_a_shape_is_fast() {
    require_gpu!();
    warpfft::release_cached();
    for n_modes in [&[1_000_000usize][..], &[1024, 1024], &[128, 128, 128]] {
        let first = std::time::Instant::now();
        drop(Plan::<f32>::type1(n_modes).tol(1e-5).build().unwrap());
        let first = first.elapsed().as_secs_f64() * 1e3;
        let before = warpfft::runtime_info(0).unwrap();
        let again = std::time::Instant::now();
        let plan = Plan::<f32>::type1(n_modes).tol(1e-5).build().unwrap();
        let again = again.elapsed().as_secs_f64() * 1e3;
        let after = warpfft::runtime_info(0).unwrap();
        let hits = json_number(&after, "plan_cache", "fft_hits")
            - json_number(&before, "plan_cache", "fft_hits");
        let last = |k| json_number(&after, "\"last\"", k);
        eprintln!(
            "{n_modes:?}: first plan {first:.2} ms, again {again:.3} ms (modules {:.3}, cufft \
             {:.3}, alloc {:.3}, factors {:.3} ms)",
            last("modules_ms"),
            last("cufft_ms"),
            last("alloc_ms"),
            last("factors_ms")
        );
        assert_eq!(
            hits, 1.0,
            "{n_modes:?}: the second plan's cuFFT plan came from the cache"
        );
        assert!(
            again < 2.0,
            "{n_modes:?}: the second plan took {again:.3} ms (target 1 ms)"
        );
        drop(plan);
    }
    warpfft::release_cached();
    let info = warpfft::runtime_info(0).unwrap();
    assert_eq!(json_number(&info, "plan_cache", "items"), 0.0, "{info}");
}

/// warpfft_bench_fft (a tuning aid): positive, finite times that grow with the grid and the
/// batch, f32 and f64. (That it frees everything: the fault-injection walk of
/// c_core/tests/test_bench.c, and memcheck --leak-check full in the sanitize stage.)
#[test]
fn bench_fft_times_grow_with_the_grid() {
    require_gpu!();
    use warpfft::{bench_fft, Precision};
    for p in [Precision::F32, Precision::F64] {
        let small = bench_fft(2, [64, 64, 1], p, 1, 0, 20).unwrap();
        let large = bench_fft(2, [2048, 2048, 1], p, 1, 0, 20).unwrap();
        let batch = bench_fft(2, [2048, 2048, 1], p, 4, 0, 5).unwrap();
        let cube = bench_fft(3, [256, 256, 256], p, 1, 0, 5).unwrap();
        eprintln!(
            "{p:?}: 64² {small:.4} ms, 2048² {large:.4}, 4 × 2048² {batch:.4}, 256³ {cube:.4}"
        );
        for t in [small, large, batch, cube] {
            assert!(t > 0.0 && t.is_finite(), "{t}");
        }
        // loose bounds: under compute-sanitizer the per-launch overhead dominates small grids
        assert!(large > small, "2048² {large} vs 64² {small}");
        assert!(batch > large, "batch of 4: {batch} vs one {large}");
    }
}
